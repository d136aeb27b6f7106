//! The road the data travels, checked: a top-level module of the library imports only
//! modules below it in this order (src/lib.rs documents it), so there is no import loop
//! and no module reaches back up the road; and inside every folder, the files (and
//! sub-folders) import each other without a loop, so each folder reads bottom-up too.
//! Test code is exempt (a test may build its fixtures with anything).

use std::collections::{BTreeMap, BTreeSet};
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

/// The module path of a file of src/ (`src/feeds/host/raw.rs` is feeds::host::raw,
/// `src/model/mod.rs` is model).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .strip_prefix(src)
        .unwrap()
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The paths a `use` tree names, braces expanded (`a::{b, c::{d, e}}` is a::b, a::c::d,
/// a::c::e; `x as y` is x).
fn expand_use(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap_or("").trim().to_string()];
    };
    let close = tree.rfind('}').filter(|&c| c > open).unwrap_or(tree.len());
    let (prefix, body) = (&tree[..open], &tree[open + 1..close]);
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&body[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| expand_use(p).into_iter().map(move |e| format!("{prefix}{e}")))
        .collect()
}

/// Every module path the code names through `crate::`, `super::` or `self::` (in `use`
/// trees and inline), made absolute from the file's own module `me`.
fn named_modules(code: &str, me: &[String]) -> Vec<Vec<String>> {
    let code: String = code
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut paths = Vec::new();
    // `use` items start a line (after `pub`, `pub(crate)`…) and end at their `;`.
    let mut at_line_start = 0;
    for line in code.split('\n') {
        let item = line.trim_start();
        let item = item.strip_prefix("pub ").map_or(item, str::trim_start);
        let item = ["pub(crate) ", "pub(super) "]
            .iter()
            .find_map(|p| item.strip_prefix(p))
            .unwrap_or(item);
        if let Some(tree) = item.strip_prefix("use ") {
            let from = at_line_start + (line.len() - tree.len());
            let end = code[from..].find(';').map_or(code.len(), |e| from + e);
            paths.extend(expand_use(
                &code[from..end].split_whitespace().collect::<Vec<_>>().join(" "),
            ));
        }
        at_line_start += line.len() + 1;
    }
    let bytes = code.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(start) {
            let at = from + at;
            from = at + start.len();
            if at > 0
                && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_' || bytes[at - 1] == b':')
            {
                continue;
            }
            let len = code[at..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(code.len() - at);
            paths.push(code[at..at + len].to_string());
        }
    }
    paths
        .iter()
        .filter_map(|p| {
            let segs: Vec<&str> = p.split("::").map(str::trim).filter(|s| !s.is_empty()).collect();
            let (first, tail) = segs.split_first()?;
            match *first {
                "crate" => Some(tail.iter().map(|s| s.to_string()).collect()),
                "super" | "self" => {
                    let mut base = me.to_vec();
                    let mut k = 0;
                    while k < segs.len() && (segs[k] == "super" || segs[k] == "self") {
                        if segs[k] == "super" {
                            base.pop();
                        }
                        k += 1;
                    }
                    base.extend(segs[k..].iter().map(|s| s.to_string()));
                    Some(base)
                }
                _ => None,
            }
        })
        .collect()
}

#[test]
fn no_loop_between_the_files_of_a_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    // folder → unit → the sibling units it imports (a unit: a file, or a sub-folder with
    // everything in it).
    let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in &files {
        if is_test_file(file) {
            continue;
        }
        let me = module_path(&src, file);
        let text = std::fs::read_to_string(file).unwrap();
        for named in named_modules(production_code(&text), &me) {
            // Each folder above the file (not src/ itself: the layer order covers it).
            for level in 1..me.len() {
                let (folder, own) = (&me[..level], &me[level]);
                if named.len() <= level || named[..level] != *folder || named[level] == *own {
                    continue;
                }
                let sibling = &named[level];
                let dir = folder.iter().fold(src.clone(), |d, p| d.join(p));
                if dir.join(format!("{sibling}.rs")).is_file() || dir.join(sibling).is_dir() {
                    edges
                        .entry(folder.to_vec())
                        .or_default()
                        .entry(own.clone())
                        .or_default()
                        .insert(sibling.clone());
                }
            }
        }
    }
    assert!(
        edges.len() > 20,
        "only {} folders with imports between their files: is the scan broken?",
        edges.len()
    );
    let mut loops = Vec::new();
    for (folder, graph) in &edges {
        let reach = |from: &String| {
            let mut seen = BTreeSet::new();
            let mut todo: Vec<&String> = graph.get(from).into_iter().flatten().collect();
            while let Some(n) = todo.pop() {
                if seen.insert(n.clone()) {
                    todo.extend(graph.get(n).into_iter().flatten());
                }
            }
            seen
        };
        let reaches: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|n| (n, reach(n))).collect();
        let mut said = BTreeSet::new();
        for (n, from_n) in &reaches {
            if said.contains(*n) || !from_n.contains(*n) {
                continue;
            }
            let members: BTreeSet<String> = from_n
                .iter()
                .filter(|m| reaches.get(m).is_some_and(|r| r.contains(*n)))
                .cloned()
                .collect();
            let arrows: Vec<String> = members
                .iter()
                .map(|m| {
                    let to: Vec<&String> = graph[m].iter().filter(|t| members.contains(*t)).collect();
                    format!("{m} -> {to:?}")
                })
                .collect();
            loops.push(format!("src/{}: {}", folder.join("/"), arrows.join("; ")));
            said.extend(members);
        }
    }
    assert!(
        loops.is_empty(),
        "files that import each other:\n{}",
        loops.join("\n")
    );
}

#[test]
fn the_loop_check_sees_use_trees_and_inline_paths() {
    assert_eq!(
        expand_use("crate::a::{b, c::{d, e as f}}"),
        ["crate::a::b", "crate::a::c::d", "crate::a::c::e"]
    );
    let me: Vec<String> = ["feeds", "host", "tracing"].map(String::from).to_vec();
    let named = named_modules(
        "use super::raw::{RawItem, raw_item};\nfn f() { crate::model::scale::scale(1, 0.5); super::super::file::x(); }",
        &me,
    );
    let named: Vec<String> = named.iter().map(|p| p.join("::")).collect();
    for want in [
        "feeds::host::raw::RawItem",
        "feeds::host::raw::raw_item",
        "model::scale::scale",
        "feeds::file::x",
    ] {
        assert!(named.iter().any(|n| n == want), "{want} in {named:?}");
    }
}
