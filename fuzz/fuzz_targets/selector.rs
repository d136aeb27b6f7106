//! libFuzzer entry for the `selector` target (the body lives in src/targets/selector.rs, shared with
//! the stable smoke runner).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| perfscope_fuzz::targets::selector::run(data));
