//! The fuzz targets: one file each, a `run(&[u8])` that panics only on a defect.

pub mod app_keys;
pub mod app_sessions;
pub mod export_pipeline;
pub mod filter_expr;
pub mod folded_parse;
pub mod hostile_args;
pub mod qperf_decode;
pub mod selector;
pub mod session_db;
pub mod tracefs_format;

/// A target as the runners see it.
pub struct Target {
    pub name: &'static str,
    pub run: fn(&[u8]),
    /// Tokens of the input's grammar, for the mutator.
    pub dictionary: &'static [&'static [u8]],
    /// Longest input the mutator makes (past 64 KiB where widths and limits break).
    pub max_len: usize,
    /// Seeds only code can make (a session database, encoded records).
    pub generated_seeds: fn() -> Vec<Vec<u8>>,
    /// Inputs made from a grammar instead of mutations of the seeds, when the target has
    /// one (the smoke runner uses it; libFuzzer mutates the seeds).
    pub generate: Option<fn(&mut crate::mutate::Rng) -> Vec<u8>>,
}

fn no_generated_seeds() -> Vec<Vec<u8>> {
    Vec::new()
}

pub const ALL: &[Target] = &[
    Target {
        name: "selector",
        run: selector::run,
        dictionary: selector::DICTIONARY,
        max_len: 80_000,
        generated_seeds: no_generated_seeds,
        generate: None,
    },
    Target {
        name: "filter_expr",
        run: filter_expr::run,
        dictionary: filter_expr::DICTIONARY,
        max_len: 8_192,
        generated_seeds: no_generated_seeds,
        generate: None,
    },
    Target {
        name: "tracefs_format",
        run: tracefs_format::run,
        dictionary: tracefs_format::DICTIONARY,
        max_len: 16_384,
        generated_seeds: no_generated_seeds,
        generate: None,
    },
    Target {
        name: "session_db",
        run: session_db::run,
        dictionary: session_db::DICTIONARY,
        max_len: 1 << 20,
        generated_seeds: session_db::generated_seeds,
        generate: None,
    },
    Target {
        name: "export_pipeline",
        run: export_pipeline::run,
        dictionary: export_pipeline::DICTIONARY,
        max_len: 80_000,
        generated_seeds: no_generated_seeds,
        generate: None,
    },
    Target {
        name: "folded_parse",
        run: folded_parse::run,
        dictionary: export_pipeline::DICTIONARY,
        max_len: 80_000,
        generated_seeds: no_generated_seeds,
        generate: None,
    },
    Target {
        name: "qperf_decode",
        run: qperf_decode::run,
        dictionary: &[],
        max_len: 65_536,
        generated_seeds: qperf_decode::generated_seeds,
        generate: None,
    },
    Target {
        name: "app_keys",
        run: app_keys::run,
        dictionary: app_keys::DICTIONARY,
        // Each step draws a screen (up to 160×50, a few ms in a debug build): a thousand
        // steps is a long session already.
        max_len: 1_024,
        generated_seeds: app_keys::generated_seeds,
        generate: None,
    },
    Target {
        name: "hostile_args",
        run: hostile_args::run,
        dictionary: hostile_args::DICTIONARY,
        max_len: 65_536,
        generated_seeds: hostile_args::generated_seeds,
        generate: Some(hostile_args::generate),
    },
];
