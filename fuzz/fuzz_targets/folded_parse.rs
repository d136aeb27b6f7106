//! libFuzzer entry for the `folded_parse` target (the body lives in src/targets/folded_parse.rs, shared with
//! the stable smoke runner).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| perfscope_fuzz::targets::folded_parse::run(data));
