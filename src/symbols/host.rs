//! Host symbolization: the running kernel (/proc/kallsyms) and user space
//! (/proc/PID/maps + the mapped files' ELF symbols and DWARF), cached per mapped file.
