//! The host perf_event source: events opened per CPU or per thread, their mmap ring
//! buffers, and the records read from them.
