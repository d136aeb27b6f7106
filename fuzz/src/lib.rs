//! perfscope's fuzz targets and the runner that drives them without libFuzzer.
//!
//! Each target in [`targets`] takes untrusted bytes the way they reach perfscope from a user
//! (a selector typed on the command line, a filter expression, a tracefs `format` file, a
//! session database, a folded file on its way to every artifact, a qperf.bin) and panics
//! only on a defect: a crash, or a broken invariant it asserts. Two drivers share them:
//!
//! - `fuzz_targets/*.rs`: libFuzzer binaries for `cargo +nightly fuzz` (coverage-guided,
//!   `scripts/fuzz.sh`);
//! - [`runner`] + `src/bin/fuzz_smoke.rs`: stable Rust, no libFuzzer: each target's seeds,
//!   then random mutations of them for a fixed time. The test command runs it so that a
//!   regression on a seed, or one a short mutation run finds, fails CI.

pub mod mutate;
pub mod runner;
pub mod targets;
