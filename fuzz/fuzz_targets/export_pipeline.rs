//! libFuzzer entry for the `export_pipeline` target (the body lives in src/targets/export_pipeline.rs, shared with
//! the stable smoke runner).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| perfscope_fuzz::targets::export_pipeline::run(data));
