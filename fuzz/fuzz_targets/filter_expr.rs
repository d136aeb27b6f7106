//! libFuzzer entry for the `filter_expr` target (the body lives in src/targets/filter_expr.rs, shared with
//! the stable smoke runner).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| perfscope_fuzz::targets::filter_expr::run(data));
