//! The export pipeline from a folded file to every artifact (`perfscope report --folded`):
//! stack.folded, the flamegraphs, pprof, the tables, report.md/json. It must write a set or
//! refuse with an error; a set it writes must exist on disk as listed and count the
//! samples the folded parser reads.

use perfscope::batch::report::{ReportInput, ReportOptions, run as report};
use perfscope::feeds::file::Input;
use perfscope::sources::folded::parse;

pub const DICTIONARY: &[&[u8]] = &[
    b";",
    b" ",
    b"\n",
    b" 1\n",
    b"[k] ",
    b"[.] ",
    b"_[k]",
    b"::",
    b"<T as Trait>::",
    b"(anonymous namespace)",
    b"\xe2\x80\xa6",
    b"\x1b[2J",
    b"&<>\"'",
    b"18446744073709551615",
];

pub fn run(data: &[u8]) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let folded = dir.path().join("in.folded");
    std::fs::write(&folded, data).expect("write the folded input");
    let options = ReportOptions::new(
        ReportInput::File(Input::Folded { path: folded }),
        dir.path().join("out"),
    );
    let Ok(set) = report(&options) else {
        return;
    };
    for (label, written) in &set.files {
        assert!(
            written.exists(),
            "{label} listed as written but missing: {}",
            written.display()
        );
    }
    let parsed = parse(&String::from_utf8_lossy(data));
    let total = parsed
        .lines
        .iter()
        .try_fold(0u64, |sum, line| sum.checked_add(line.count));
    if let Some(total) = total {
        assert_eq!(
            set.total_samples, total,
            "the artifacts count what the folded file holds"
        );
    }
}
