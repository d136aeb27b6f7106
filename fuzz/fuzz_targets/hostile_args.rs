//! libFuzzer entry for the `hostile_args` target (the body lives in
//! src/targets/hostile_args/, shared with the stable smoke runner): whole command lines of
//! the real binary, NUL-separated.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| perfscope_fuzz::targets::hostile_args::run(data));
