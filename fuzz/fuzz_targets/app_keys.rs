//! libFuzzer entry for the `app_keys` target (the body lives in src/targets/app_keys.rs, shared with
//! the stable smoke runner).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| perfscope_fuzz::targets::app_keys::run(data));
