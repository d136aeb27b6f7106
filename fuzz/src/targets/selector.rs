//! The event-selector grammar (`-e 'sys:name/filter/attr=value/…'`) as a user types it:
//! parsing must answer with specs or an error, and the error must render (its caret line
//! included) without panicking, whatever the length or the characters.

use perfscope::sources::tracefs::parse_selectors;

pub const DICTIONARY: &[&[u8]] = &[
    b"sched:",
    b"sched_switch",
    b"*:*",
    b",",
    b"/",
    b"//",
    b"key=",
    b"alias=",
    b"comm=",
    b"printkey=",
    b"role=",
    b"top-by=",
    b"top-add=",
    b"num=",
    b"cpus=",
    b"max-stack=",
    b"stack",
    b"untraced",
    b"trigger",
    b"printf(\"%d\",key)",
    b"&&",
    b"==",
    b"\"",
    b"\x1b[31m",
    b"\xc3\xa9",
    b"uprobe:",
    b"uretprobe:",
    b"kprobe:",
    b"/usr/bin/x:",
    b"@\"/lib/libc.so.6\"",
    b"+0x",
    b":0x",
];

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match parse_selectors(&text) {
        Ok(specs) => {
            for spec in &specs {
                assert!(!spec.full_name().is_empty() || spec.is_wildcard() || spec.name.is_empty());
                let _ = spec.display_name();
            }
        }
        Err(error) => {
            let shown = error.to_string();
            assert!(shown.contains(&error.message), "the message is shown: {shown}");
            assert!(
                error.position <= error.text.len(),
                "the caret points inside the text"
            );
        }
    }
}
