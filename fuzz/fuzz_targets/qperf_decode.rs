//! libFuzzer entry for the `qperf_decode` target (the body lives in src/targets/qperf_decode.rs, shared with
//! the stable smoke runner).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| perfscope_fuzz::targets::qperf_decode::run(data));
