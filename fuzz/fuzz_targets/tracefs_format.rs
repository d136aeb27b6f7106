//! libFuzzer entry for the `tracefs_format` target (the body lives in src/targets/tracefs_format.rs, shared with
//! the stable smoke runner).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| perfscope_fuzz::targets::tracefs_format::run(data));
