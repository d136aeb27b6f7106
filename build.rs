//! Link the perfscope binary with packed relative relocations (`DT_RELR`, glibc ≥ 2.36):
//! its ~22 000 relocations take 4 KiB instead of ~500 KiB, and the dynamic loader no longer
//! reads (and keeps resident) half a megabyte of them at every start.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
}
