//! Link arguments for the perfscope binary.
//!
//! - Packed relative relocations (`DT_RELR`, glibc ≥ 2.36): its ~22 000 relocations take
//!   4 KiB instead of ~500 KiB, and the dynamic loader no longer reads (and keeps
//!   resident) half a megabyte of them at every start.
//! - The functions a run executes first in `.text`, grouped by the run that executes them
//!   (`build/text-order.txt`, written by `scripts/text-order.sh`): the kernel maps code 64 KiB
//!   around each fault, so code spread over the whole text would pull megabytes of
//!   untouched neighbours into the resident set. On x86_64 Linux, where rustc links with LLD,
//!   only; a name it does not find — the list is older than the code — only
//!   loses packing, so its warnings are off.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    let order = Path::new(env!("CARGO_MANIFEST_DIR")).join("build/text-order.txt");
    println!("cargo:rerun-if-changed={}", order.display());
    // rustc links with its bundled LLD on x86_64 Linux; GNU ld elsewhere knows no such flag.
    let lld = std::env::var("TARGET").is_ok_and(|t| t == "x86_64-unknown-linux-gnu");
    if lld && order.exists() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
