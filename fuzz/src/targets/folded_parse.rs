//! Untrusted text through the folded parser: it must not panic, and every line it accepts
//! must survive a write/parse round trip unchanged.

use perfscope::sources::folded::{format_line, parse, parse_line};

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let parsed = parse(&text);
    assert!(parsed.skipped.len() <= parsed.skipped_count);
    for line in &parsed.lines {
        let written = format_line(&line.frames, line.count);
        let back = parse_line(&written)
            .expect("a written line parses")
            .expect("not blank");
        assert_eq!(&back, line);
    }
}
