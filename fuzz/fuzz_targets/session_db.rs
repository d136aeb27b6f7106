//! libFuzzer entry for the `session_db` target (the body lives in src/targets/session_db.rs, shared with
//! the stable smoke runner).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| perfscope_fuzz::targets::session_db::run(data));
