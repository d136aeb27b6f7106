//! Results and notices go through src/stdio.rs and nowhere else: `print!`/`println!`
//! panic when stdout refuses a write (`> /dev/full`, a closed pipe), `eprint!`/`eprintln!`
//! when stderr does (`-o /dev/full` puts stderr on that file too), and a raw `stdout()`
//! writer returns errors the exit code cannot tell from others (a reader that quit is a
//! quiet 0, a full disk a 1). Test code is exempt, as in tests/layers.rs.

use std::path::{Path, PathBuf};

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

/// What a line of production code may not do outside src/stdio.rs.
fn offence(line: &str, file: &Path) -> Option<&'static str> {
    let code = line.split("//").next().unwrap_or("");
    for mac in ["print!(", "println!(", "eprint!(", "eprintln!("] {
        // `eprintln!(` contains `println!(`: only a macro name that starts there counts.
        let named_here = code.match_indices(mac).any(|(at, _)| {
            code[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
        });
        if named_here {
            return Some(mac);
        }
    }
    let terminal = file.ends_with("app/terminal.rs");
    if code.contains("stdout()") && !code.contains("is_terminal") && !terminal {
        return Some("stdout()");
    }
    None
}

fn offences_in(text: &str, file: &Path) -> Vec<(usize, &'static str)> {
    let production = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    production
        .lines()
        .enumerate()
        .filter_map(|(n, line)| offence(line, file).map(|what| (n + 1, what)))
        .collect()
}

#[test]
fn only_stdio_writes_the_standard_streams() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut found = Vec::new();
    let mut scanned = 0;
    for file in &files {
        if is_test_file(file) || file.ends_with("src/stdio.rs") {
            continue;
        }
        scanned += 1;
        let text = std::fs::read_to_string(file).unwrap();
        for (line, what) in offences_in(&text, file) {
            found.push(format!(
                "{}:{line}: {what} (use crate::stdio: print/out for results, say for notices)",
                file.strip_prefix(&src).unwrap().display()
            ));
        }
    }
    assert!(scanned > 200, "only {scanned} files scanned: is the walk broken?");
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_scan_sees_each_way_of_writing_and_skips_comments_and_tests() {
    let file = Path::new("src/batch/x.rs");
    let code = "fn a() {\n    println!(\"x\");\n    eprintln!(\"y\");\n    let o = std::io::stdout();\n    // print!(\"a comment\")\n    let t = std::io::stdout().is_terminal();\n}\n#[cfg(test)]\nmod tests {\n    fn t() { println!(\"fine\"); }\n}\n";
    assert_eq!(
        offences_in(code, file),
        [(2, "println!("), (3, "eprintln!("), (4, "stdout()")]
    );
    assert!(offences_in("print!(\"{}\", 1);", file) == [(1, "print!(")]);
    assert!(offences_in("let x = my_print!(1);", file).is_empty());
}
