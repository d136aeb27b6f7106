//! The README says only what a test shows: every capability line of its status table and
//! every block of prose that quotes a figure (a size, a time, a rate, a ratio, a share)
//! names the test, benchmark or script that shows it, and those exist.
//!
//! A citation is a path to a file of this repository (`tests/host_cli.rs`,
//! `benches/engine_memory.rs`, `scripts/bench-plugin-overhead.sh`, `src/…/x.rs`) or a cargo
//! command naming one (`cargo bench --bench engine_memory`, `cargo test --test verdict`).

use std::path::Path;

use regex::Regex;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// The README's blocks outside code fences: paragraphs, list items and table rows, each
/// with its first line number.
fn blocks(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut current: Option<(usize, String)> = None;
    let mut fenced = false;
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.extend(current.take());
            continue;
        }
        let starts_block = line.trim().is_empty()
            || line.starts_with('|')
            || line.starts_with("- ")
            || line.starts_with('#');
        if fenced || starts_block {
            out.extend(current.take());
        }
        if fenced || line.trim().is_empty() {
            continue;
        }
        if line.starts_with('|') || line.starts_with('#') {
            out.push((n, line.to_string()));
            continue;
        }
        match &mut current {
            Some((_, block)) => {
                block.push('\n');
                block.push_str(line);
            }
            None => current = Some((n, line.to_string())),
        }
    }
    out.extend(current);
    out
}

/// The files a block cites.
fn citations(block: &str) -> Vec<String> {
    let path = Regex::new(r"\b((?:tests|benches|scripts|src|fuzz|plugin)/[\w./-]+\.(?:rs|sh|py))").unwrap();
    let cargo = Regex::new(r"cargo (bench --bench|test --test) ([\w-]+)").unwrap();
    let mut out: Vec<String> = path.captures_iter(block).map(|c| c[1].to_string()).collect();
    for c in cargo.captures_iter(block) {
        let dir = if &c[1] == "bench --bench" {
            "benches"
        } else {
            "tests"
        };
        out.push(format!("{dir}/{}.rs", &c[2]));
    }
    out
}

/// A measured figure: a number with a unit of size, time, rate, ratio or share, outside
/// backticks (flags and values a user types are not claims).
fn figures(block: &str) -> Vec<String> {
    let code = Regex::new(r"`[^`]*`").unwrap();
    let prose = code.replace_all(block, "");
    let figure = Regex::new(
        r"(?i)(?:^|[^\w.])(~?\d[\d,.]*(?:–\d[\d,.]*)?\s?(?:MB|MiB|KiB|GB|kB|bytes|ms|µs|us|ns|s|seconds|min|×|x|%|Hz|k|M)(?:/s)?)(?:[^\w]|$)",
    )
    .unwrap();
    // A terminal size (`80×24`) is a claim too: that it works there.
    let size = Regex::new(r"\b\d+×\d+\b").unwrap();
    let mut out: Vec<String> = figure
        .captures_iter(&prose)
        .map(|c| c[1].trim().to_string())
        .collect();
    out.extend(size.find_iter(&prose).map(|m| m.as_str().to_string()));
    out
}

#[test]
fn every_status_line_and_quoted_figure_names_an_existing_test_or_benchmark() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = readme();
    let status_start = text.find("## Status").expect("a Status section");
    let status_end = status_start
        + text[status_start..][3..]
            .find("\n## ")
            .expect("a section after Status")
        + 3;
    let status_lines = text[..status_start].lines().count();
    let mut failures = Vec::new();
    let mut status_rows = 0;
    for (n, block) in blocks(&text) {
        let cited = citations(&block);
        for path in &cited {
            if !root.join(path).exists() {
                failures.push(format!("README.md:{n}: cites {path}, which does not exist"));
            }
        }
        let in_status = n > status_lines && n < status_lines + text[status_start..status_end].lines().count();
        if in_status && block.starts_with("| ") && !block.starts_with("| capability") {
            status_rows += 1;
            if cited.is_empty() {
                failures.push(format!(
                    "README.md:{n}: a status line without the test that shows it: {block}"
                ));
            }
            continue;
        }
        let found = figures(&block);
        if !found.is_empty() && cited.is_empty() {
            failures.push(format!(
                "README.md:{n}: quotes {found:?} without the test or benchmark that shows it:\n    {}",
                block.lines().next().unwrap_or_default()
            ));
        }
    }
    assert!(status_rows >= 5, "the status table has {status_rows} lines");
    assert!(
        failures.is_empty(),
        "{} unbacked claims:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_checker_sees_figures_and_citations() {
    assert_eq!(
        figures("top went from 104 MB to 25 MB resident"),
        ["104 MB", "25 MB"]
    );
    assert_eq!(figures("slows the guest 1.06× (`--freq 1000`)"), ["1.06×"]);
    assert!(figures("`-m 64` pages, `--duration 2`").is_empty());
    assert_eq!(
        figures("works in an 80×24 terminal"),
        ["80×24"],
        "a terminal size: cite the test"
    );
    assert_eq!(
        citations("shown by tests/verdict.rs and `cargo bench --bench engine_memory`"),
        ["tests/verdict.rs", "benches/engine_memory.rs"]
    );
}
