//! The road the data travels, checked: a top-level module of the library imports only
//! modules below it in this order (src/lib.rs documents it), so there is no import loop
//! and no module reaches back up the road. Test code is exempt (a test may build its
//! fixtures with anything).

use std::path::{Path, PathBuf};

/// Lowest first: a module may use itself and the ones before it.
const ORDER: [&str; 17] = [
    "stdio",
    "stop",
    "input",
    "model",
    "trace",
    "symbols",
    "sources",
    "store",
    "analyzers",
    "export",
    "feeds",
    "engine",
    "config",
    "views",
    "app",
    "batch",
    "cli",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of src/ belongs to (`src/engine.rs` and `src/engine/…`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let first = file.strip_prefix(src).ok()?.components().next()?;
    let name = first.as_os_str().to_str()?;
    Some(name.trim_end_matches(".rs").to_string())
}

fn is_test_file(file: &Path) -> bool {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests.rs"
        || name.contains("_tests")
        || name.starts_with("tests_")
        || name == "test_support.rs"
        || file
            .components()
            .any(|c| c.as_os_str() == "tests" || c.as_os_str() == "golden_tests")
}

/// The code of a file without its `#[cfg(test)]` part (test modules come last).
fn production_code(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    }
}

/// Every `crate::name` the code mentions, with its line.
fn crate_paths(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("");
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((n + 1, name));
            }
            rest = after;
        }
    }
    out
}

#[test]
fn no_module_imports_one_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let rank = |m: &str| ORDER.iter().position(|x| *x == m);
    let mut violations = Vec::new();
    let mut checked = 0;
    for file in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        let Some(own) = rank(&module) else { continue };
        if is_test_file(file) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for (line, used) in crate_paths(production_code(&text)) {
            checked += 1;
            match rank(&used) {
                Some(r) if r > own => violations.push(format!(
                    "{}:{line}: {module} imports {used} (above it)",
                    file.strip_prefix(&src).unwrap().display()
                )),
                _ => {}
            }
        }
    }
    assert!(
        checked > 300,
        "only {checked} crate paths found: is the scan broken?"
    );
    assert!(violations.is_empty(), "{}", violations.join("\n"));
    // Every top-level module of lib.rs is placed in the order.
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    for line in lib.lines() {
        if let Some(name) = line.strip_prefix("pub mod ").and_then(|l| l.strip_suffix(';')) {
            assert!(
                rank(name).is_some(),
                "lib.rs module {name} is not in the layer order"
            );
        }
    }
}
