//! `perfscope report` and `perfscope diff` as a user runs them: the real binary on the
//! recorded assets pair, on qperf.bin files encoded here against the freshly built test
//! kernel, and on bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::guest::{build_test_guest, return_address, symbol_range};
use perfscope::export::pprof;
use perfscope::sources::qperf_file::{Callchain, QperfRecord, encode_v3};
use serde_json::Value;

fn perfscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(args)
        .output()
        .expect("run perfscope")
}

fn asset(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(name)
        .display()
        .to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn nonempty(path: &Path) {
    let len = std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("missing {}: {e}", path.display()))
        .len();
    assert!(len > 0, "{} is empty", path.display());
}

/// The self-hottest function of a folded file.
fn hottest_leaf(folded: &Path) -> (String, u64) {
    let mut counts = std::collections::BTreeMap::<String, u64>::new();
    for line in std::fs::read_to_string(folded).unwrap().lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        *counts
            .entry(stack.rsplit(';').next().unwrap().to_string())
            .or_default() += n.parse::<u64>().unwrap();
    }
    counts.into_iter().max_by_key(|(_, n)| *n).unwrap()
}

#[test]
fn report_on_the_recorded_test_kernel_writes_every_artifact() {
    let out = tempfile::tempdir().unwrap();
    let o = perfscope(&[
        "report",
        &asset("tinyk-riscv64.qperf.bin"),
        "--elf",
        &asset("tinyk-riscv64.elf"),
        "--out",
        out.path().to_str().unwrap(),
        "--start-sec",
        "0.150",
        "--stop-sec",
        "1.493",
        "--focus",
        "tree_walk",
        "--flamegraph-kind",
        "html",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let latest = out.path().join("perf/riscv64/latest");
    let q = latest.join("qperf");
    for f in [
        "report.json",
        "report.md",
        "hotspots.csv",
        "hotspot_categories.csv",
    ] {
        nonempty(&latest.join(f));
    }
    for f in [
        "stack.folded",
        "flamegraph.svg",
        "flamegraph.html",
        "profile.pb.gz",
        "resolve.stats.json",
        "stack-depth-summary.csv",
        "window.json",
        "summary.txt",
    ] {
        nonempty(&q.join(f));
    }
    for variant in ["boot", "workload", "post", "focus"] {
        nonempty(&q.join(format!("stack.{variant}.folded")));
        nonempty(&q.join(format!("flamegraph.{variant}.svg")));
        nonempty(&q.join(format!("resolve.{variant}.stats.json")));
        nonempty(&q.join(format!("stack-depth-summary.{variant}.csv")));
    }

    // The workload spends its time in mix_leaf (assets/README.md, checked with addr2line).
    assert_eq!(hottest_leaf(&q.join("stack.folded")).0, "mix_leaf");
    let report = read_json(&latest.join("report.json"));
    assert_eq!(report["result"], "ok");
    assert_eq!(report["arch"], "riscv64");
    let top = &report["hotspots"]["top_functions"][0];
    assert_eq!(top["function"], "mix_leaf");
    assert!(top["self_percent"].as_f64().unwrap() > 40.0, "{top}");
    assert_eq!(report["input"]["format"], "v3");
    assert_eq!(report["input"]["clean"], true);
    assert_eq!(report["plugin_summary"]["frequency_hz"], "1000");

    // The window splits the run: boot + main + post = all samples.
    let stats = read_json(&q.join("resolve.stats.json"));
    let main = stats["selected_records"].as_u64().unwrap();
    let before = stats["samples_excluded_before"].as_u64().unwrap();
    let after = stats["samples_excluded_after"].as_u64().unwrap();
    assert_eq!(stats["raw_records"], 1435);
    assert_eq!(main + before + after, 1435);
    assert!(before >= 65, "the firmware samples are boot: {before}");
    assert_eq!(
        read_json(&q.join("resolve.boot.stats.json"))["selected_records"],
        before
    );
    assert_eq!(
        read_json(&q.join("resolve.post.stats.json"))["selected_records"],
        after
    );
    assert_eq!(stats["callchain"]["method"], "fp");
    let boot = std::fs::read_to_string(q.join("stack.boot.folded")).unwrap();
    assert!(
        !boot.contains("run_bench;"),
        "boot excludes the workload:\n{boot}"
    );
    let focus = std::fs::read_to_string(q.join("stack.focus.folded")).unwrap();
    assert!(focus.lines().all(|l| l.contains("tree_walk")), "{focus}");

    // The SVG has frame titles; the HTML page carries the SVG itself.
    let svg = std::fs::read_to_string(q.join("flamegraph.svg")).unwrap();
    assert!(svg.contains("<title>mix_leaf ("), "no mix_leaf frame in the SVG");
    assert!(svg.contains("<title>run_bench ("));
    let html = std::fs::read_to_string(q.join("flamegraph.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("mix_leaf"));

    // pprof decodes and agrees with the folded file.
    let p = pprof::decode(&std::fs::read(q.join("profile.pb.gz")).unwrap()).unwrap();
    let by_stack = pprof::stacks_by_name(&p);
    let total: i64 = by_stack.values().sum();
    assert_eq!(total as u64, main);
    let folded_total: u64 = std::fs::read_to_string(q.join("stack.folded"))
        .unwrap()
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(folded_total, main);
    assert_eq!(p.period, 1_000_000, "1000 Hz from the plugin summary");
    assert!(
        p.location.iter().any(|l| l.line.iter().any(|x| x.line > 0)),
        "line numbers present"
    );

    // hotspots.csv keeps the reference columns first, and its order: row 1 is the function
    // with the most frame occurrences in stack.folded, as the reference's parse_folded
    // ranks (ties by name).
    let csv = std::fs::read_to_string(latest.join("hotspots.csv")).unwrap();
    assert!(csv.starts_with("kind,name,samples,percent,self,self_percent,total,total_percent\n"));
    let mut occurrences = std::collections::BTreeMap::<String, u64>::new();
    for line in std::fs::read_to_string(q.join("stack.folded")).unwrap().lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        for frame in stack.split(';').filter(|f| !f.is_empty()) {
            *occurrences.entry(frame.to_string()).or_default() += n.parse::<u64>().unwrap();
        }
    }
    let first = occurrences
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        .unwrap()
        .0;
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .starts_with(&format!("function,\"{first}\",")),
        "row 1 is {first}:\n{csv}"
    );

    let printed = stdout(&o);
    assert!(
        printed.contains("mix_leaf") && printed.contains("report.json"),
        "{printed}"
    );
}

/// Addresses of the freshly built test kernel, looked up once (nm and objdump are slow).
struct Kernel {
    elf: PathBuf,
    addresses: std::collections::HashMap<String, u64>,
}

impl Kernel {
    fn new(elf: PathBuf) -> Self {
        let mut k = Kernel {
            elf,
            addresses: Default::default(),
        };
        for (f, off) in [("mix_leaf", 8), ("tree_walk", 16)] {
            let (start, end) = symbol_range(&k.elf, f);
            assert!(start + off < end, "{f}+{off:#x} is outside it");
            k.addresses.insert(format!("{f}+{off}"), start + off);
        }
        for (caller, callee) in [
            ("hash_block", "mix_leaf"),
            ("hash_workload", "hash_block"),
            ("run_bench", "hash_workload"),
            ("kmain", "run_bench"),
            ("tree_walk", "tree_walk"),
            ("tree_workload", "tree_walk"),
            ("run_bench", "tree_workload"),
        ] {
            let ret = return_address(&k.elf, caller, callee);
            k.addresses.insert(format!("{caller}>{callee}"), ret);
        }
        k.addresses
            .insert("hash_block".into(), symbol_range(&k.elf, "hash_block").0);
        k
    }
    fn at(&self, function: &str, offset: u64) -> u64 {
        self.addresses[&format!("{function}+{offset}")]
    }
    fn ret(&self, caller: &str, callee: &str) -> u64 {
        self.addresses[&format!("{caller}>{callee}")]
    }
}

fn record(t_ms: u64, trace: Vec<u64>) -> QperfRecord {
    QperfRecord {
        elapsed_ns: Some(t_ms * 1_000_000),
        pc: trace[0],
        sp: Some(0xffffffc080210000),
        fp: Some(0xffffffc080210040),
        cpu: Some(0),
        callchain: Some(Callchain::Fp),
        trace,
    }
}

fn write_bin(path: &Path, records: &[QperfRecord]) {
    let mut bytes = Vec::new();
    for r in records {
        encode_v3(r, &mut bytes);
    }
    std::fs::write(path, bytes).unwrap();
}

/// A synthetic profile of the real kernel: 600 samples in mix_leaf under hash_block, 300 in
/// tree_walk recursing 3 deep, 100 in OpenSBI, 50 early-boot samples at the physical alias
/// of hash_block. Times: 0–99 ms boot, 100–999 ms workload, 1000+ ms post.
fn synthetic(kernel: &Kernel) -> Vec<QperfRecord> {
    let mut v = Vec::new();
    let hash_path = |leaf| {
        vec![
            leaf,
            kernel.ret("hash_block", "mix_leaf"),
            kernel.ret("hash_workload", "hash_block"),
            kernel.ret("run_bench", "hash_workload"),
            kernel.ret("kmain", "run_bench"),
        ]
    };
    for i in 0..600 {
        v.push(record(100 + i, hash_path(kernel.at("mix_leaf", 8))));
    }
    let tree_self = kernel.ret("tree_walk", "tree_walk");
    for i in 0..300 {
        v.push(record(
            100 + 600 + i / 2,
            vec![
                kernel.at("tree_walk", 16),
                tree_self,
                tree_self,
                kernel.ret("tree_workload", "tree_walk"),
                kernel.ret("run_bench", "tree_workload"),
                kernel.ret("kmain", "run_bench"),
            ],
        ));
    }
    for i in 0..100 {
        v.push(record(i / 2, vec![0x8000_1234 + (i % 4) * 2]));
    }
    let phys = kernel.addresses["hash_block"] - 0xffffffc0_00000000; // the load address of hash_block (LMA)
    for i in 0..50 {
        v.push(record(1000 + i, vec![phys + 0x14]));
    }
    v
}

#[test]
fn report_symbolizes_the_built_kernel_with_inline_frames_windows_and_filters() {
    let guest = build_test_guest();
    let kernel = Kernel::new(guest.elf.clone());
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("qperf.bin");
    write_bin(&bin, &synthetic(&kernel));
    let out = dir.path().join("out");
    let o = perfscope(&[
        "report",
        bin.to_str().unwrap(),
        "--elf",
        guest.elf.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--start-sec",
        "0.1",
        "--stop-sec",
        "1.0",
        "--format",
        "folded",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let q = out.join("perf/riscv64/latest/qperf");
    assert!(
        !q.join("flamegraph.svg").exists(),
        "--format folded writes no SVG"
    );
    let folded = std::fs::read_to_string(q.join("stack.folded")).unwrap();
    assert!(
        folded.contains("kmain;run_bench;hash_workload;hash_block;mix_leaf 600\n"),
        "return addresses resolve at ip-1 to their callers:\n{folded}"
    );
    assert!(
        folded.contains("kmain;run_bench;tree_workload;tree_walk;tree_walk;tree_walk 300\n"),
        "{folded}"
    );
    let stats = read_json(&q.join("resolve.stats.json"));
    assert_eq!(stats["selected_records"], 900);
    assert_eq!(stats["samples_excluded_before"], 100);
    assert_eq!(stats["samples_excluded_after"], 50);
    // OpenSBI's samples (below the kernel's load address) are firmware, by region.
    let boot = std::fs::read_to_string(q.join("stack.boot.folded")).unwrap();
    assert_eq!(boot, "[firmware] 100\n");
    assert_eq!(stats["outside_kernel"]["firmware_frames"], 100);
    assert_eq!(stats["kernel_alias"]["source"], "program headers");
    assert_eq!(stats["kernel_alias"]["phys_start"], "0x80200000");

    // Post: the early-boot physical alias maps through the program headers onto hash_block,
    // where fold_index is inlined.
    let post = std::fs::read_to_string(q.join("stack.post.folded")).unwrap();
    assert_eq!(post, "hash_block;fold_index 50\n", "alias + inline chain");
    assert_eq!(
        read_json(&q.join("resolve.post.stats.json"))["aliased_frames"],
        50
    );

    // Self and total per sample: tree_walk recursion counts once in total.
    let report = read_json(&out.join("perf/riscv64/latest/report.json"));
    let rows = report["hotspots"]["top_functions"].as_array().unwrap();
    let row = |name: &str| rows.iter().find(|r| r["function"] == name).unwrap().clone();
    assert_eq!(row("mix_leaf")["self"], 600);
    assert_eq!(row("tree_walk")["self"], 300);
    assert_eq!(row("tree_walk")["total"], 300);
    assert_eq!(row("tree_walk")["occurrences"], 900);
    assert_eq!(row("run_bench")["total"], 900);
    assert_eq!(row("run_bench")["self"], 0);

    // --kernel-filter drops firmware frames (and samples left with none) and says how many.
    let filtered = dir.path().join("filtered");
    let o = perfscope(&[
        "report",
        bin.to_str().unwrap(),
        "--elf",
        guest.elf.to_str().unwrap(),
        "--out",
        filtered.to_str().unwrap(),
        "--kernel-filter",
        "--format",
        "folded",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let fq = filtered.join("perf/riscv64/latest/qperf");
    let stats = read_json(&fq.join("resolve.stats.json"));
    assert_eq!(stats["kernel_filter"]["samples_dropped"], 100);
    assert_eq!(stats["kernel_filter"]["frames_dropped"], 100);
    assert_eq!(stats["selected_records"], 950);
    assert!(
        !std::fs::read_to_string(fq.join("stack.folded"))
            .unwrap()
            .contains("0x8000")
    );
    let md = std::fs::read_to_string(filtered.join("perf/riscv64/latest/report.md")).unwrap();
    assert!(md.contains("dropped 100 frames and 100 samples"), "{md}");
}

#[test]
fn kallsyms_symbols_demangle_and_follow_the_symbol_style() {
    let dir = tempfile::tempdir().unwrap();
    let kallsyms = dir.path().join("kallsyms");
    std::fs::write(
        &kallsyms,
        "ffffffff81000000 T _stext\n\
         ffffffff81000100 T _ZN6kernel4main17h0123456789abcdefE\n\
         ffffffff81000200 t _ZN6axtask9run_queue8RunQueue7resched17hfedcba9876543210E\n\
         ffffffff81000300 T axfs::fops::File::read_at::h00112233445566aa\n\
         ffffffff81000400 T _etext\n\
         ffffffffc0001000 t nvme_irq\t[nvme]\n",
    )
    .unwrap();
    let bin = dir.path().join("qperf.bin");
    write_bin(
        &bin,
        &[
            record(1, vec![0xffffffff81000210, 0xffffffff81000108]),
            record(2, vec![0xffffffff81000310, 0xffffffff81000108]),
            record(3, vec![0xffffffffc0001010]),
        ],
    );
    let run = |style: &str| {
        let out = dir.path().join(style);
        let o = perfscope(&[
            "report",
            bin.to_str().unwrap(),
            "--kallsyms",
            kallsyms.to_str().unwrap(),
            "--symbol-style",
            style,
            "--arch",
            "x86_64",
            "--format",
            "folded",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(out.join("perf/x86_64/latest/qperf/stack.folded")).unwrap()
    };
    // A frame is the function: no `+0x<offset>` (the address stays in the location).
    assert_eq!(
        run("full"),
        "kernel::main;axfs::fops::File::read_at 1\n\
         kernel::main;axtask::run_queue::RunQueue::resched 1\n\
         nvme_irq [nvme] 1\n"
    );
    assert_eq!(
        run("short"),
        "main;read_at 1\nmain;resched 1\nnvme_irq [nvme] 1\n"
    );
    assert!(run("module").contains("axtask::run_queue::RunQueue::resched 1"));
}

#[test]
fn folded_input_gets_the_same_reports() {
    let folded = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        folded.path(),
        "kernel::main;core::array::<impl [u8\u{ff1b} 32]>::map 3\nkernel::main;idle 1\n",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = perfscope(&[
        "report",
        "--folded",
        folded.path().to_str().unwrap(),
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let f = std::fs::read_to_string(out.path().join("perf/unknown/latest/qperf/stack.folded")).unwrap();
    assert_eq!(
        f, "kernel::main;core::array::<impl [u8\u{ff1b} 32]>::map 3\nkernel::main;idle 1\n",
        "a ; inside a name stays escaped on the way out"
    );
    let report = read_json(&out.path().join("perf/unknown/latest/report.json"));
    assert_eq!(report["input"]["kind"], "folded");
    assert_eq!(report["hotspots"]["total_samples"], 4);
    assert_eq!(
        report["hotspots"]["top_functions"][0]["function"], "core::array::<impl [u8; 32]>::map",
        "and is a real ; inside the model and the reports"
    );
    let svg = std::fs::read_to_string(out.path().join("perf/unknown/latest/qperf/flamegraph.svg")).unwrap();
    assert!(svg.contains("[u8\u{ff1b} 32]"), "the SVG shows the name whole");
}

#[test]
fn a_truncated_file_keeps_its_records_and_says_what_was_lost() {
    let guest = build_test_guest();
    let kernel = Kernel::new(guest.elf.clone());
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("qperf.bin");
    write_bin(&bin, &synthetic(&kernel));
    let mut bytes = std::fs::read(&bin).unwrap();
    let full = bytes.len();
    bytes.truncate(full - 5); // QEMU killed mid-write
    std::fs::write(&bin, &bytes).unwrap();
    let out = dir.path().join("out");
    let o = perfscope(&[
        "report",
        bin.to_str().unwrap(),
        "--elf",
        guest.elf.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    // Exit 3: finished, but the input was cut (issue 11: it exited 0); the warning is on
    // stderr, results on stdout.
    assert_eq!(
        o.status.code(),
        Some(3),
        "a truncated recording is still a report, marked incomplete: {}",
        stderr(&o)
    );
    let printed = stderr(&o);
    assert!(printed.contains("truncated last record at byte"), "{printed}");
    let report = read_json(&out.join("perf/riscv64/latest/report.json"));
    assert_eq!(report["result"], "incomplete");
    assert_eq!(report["input"]["records"], 1049);
    assert_eq!(report["input"]["clean"], false);
    assert!(report["input"]["bytes_lost"].as_u64().unwrap() > 0);
    assert_eq!(report["hotspots"]["total_samples"], 1049);
}

#[test]
fn bad_input_gets_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();

    // A qperf.bin without symbols.
    let o = perfscope(&["report", &asset("tinyk-riscv64.qperf.bin"), "--out", out]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("pass the kernel ELF with --elf"),
        "{}",
        stderr(&o)
    );

    // The raw image instead of the ELF.
    let image = dir.path().join("kernel.bin");
    std::fs::write(&image, [0x97u8, 0x02, 0, 0, 0x93, 0x82, 0, 0]).unwrap();
    let o = perfscope(&[
        "report",
        &asset("tinyk-riscv64.qperf.bin"),
        "--elf",
        image.to_str().unwrap(),
        "--out",
        out,
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("not the raw .bin image"), "{}", stderr(&o));

    // An empty recording.
    let empty = dir.path().join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    let o = perfscope(&[
        "report",
        empty.to_str().unwrap(),
        "--elf",
        &asset("tinyk-riscv64.elf"),
        "--out",
        out,
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("empty file"), "{}", stderr(&o));

    // A hostile trace length where the file starts: no version decodes it, and it says why.
    let hostile = dir.path().join("hostile.bin");
    let mut bytes = vec![0xfd];
    bytes.extend_from_slice(&u64::MAX.to_le_bytes());
    std::fs::write(&hostile, &bytes).unwrap();
    let o = perfscope(&[
        "report",
        hostile.to_str().unwrap(),
        "--elf",
        &asset("tinyk-riscv64.elf"),
        "--out",
        out,
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("trace length"), "{}", stderr(&o));

    // The same after a good record: the good one is kept, the corrupt one is located.
    let mut bytes = Vec::new();
    encode_v3(&record(1, vec![0xffffffc0802001e4]), &mut bytes);
    let good = bytes.len();
    bytes.extend_from_slice(&[0x01, 0x02, 0x00, 0x00, 0x00, 0x01, 0xfd]);
    bytes.extend_from_slice(&u64::MAX.to_le_bytes());
    std::fs::write(&hostile, &bytes).unwrap();
    let o = perfscope(&[
        "report",
        hostile.to_str().unwrap(),
        "--elf",
        &asset("tinyk-riscv64.elf"),
        "--out",
        out,
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("corrupt record at byte {good}")),
        "{}",
        stderr(&o)
    );
    let report = read_json(&dir.path().join("out/perf/riscv64/latest/report.json"));
    assert_eq!(report["result"], "incomplete");
    assert_eq!(report["hotspots"]["total_samples"], 1);

    // A bad regex and a reversed window.
    let o = perfscope(&[
        "report",
        "--folded",
        &asset("tinyk-riscv64.folded"),
        "--out",
        out,
        "--focus",
        "(",
    ]);
    assert!(
        stderr(&o).contains("--focus is not a valid regular expression"),
        "{}",
        stderr(&o)
    );
    let o = perfscope(&[
        "report",
        "--folded",
        &asset("tinyk-riscv64.folded"),
        "--out",
        out,
        "--start-sec",
        "2",
        "--stop-sec",
        "1",
    ]);
    assert!(
        stderr(&o).contains("must be less than --stop-sec"),
        "{}",
        stderr(&o)
    );

    // A folded file with one bad line keeps the rest and reports the line.
    let folded = dir.path().join("x.folded");
    std::fs::write(&folded, "a;b 3\nbroken line\na;c 2\n").unwrap();
    let o = perfscope(&["report", "--folded", folded.to_str().unwrap(), "--out", out]);
    // A malformed line makes the input incomplete: exit 3, the warning on stderr.
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("skipped 1 malformed line(s); first at line 2"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn diff_ranks_changed_functions_and_draws_a_differential_graph() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.folded");
    let b = dir.path().join("b.folded");
    std::fs::write(&a, "main;work;mix_leaf 80\nmain;work;matmul 20\n").unwrap();
    std::fs::write(
        &b,
        "main;work;mix_leaf 30\nmain;work;matmul 60\nmain;new_thing 10\n",
    )
    .unwrap();
    let out = dir.path().join("diff");
    let o = perfscope(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let first = text.lines().skip_while(|l| !l.contains("Δself")).nth(1).unwrap();
    assert!(first.ends_with("mix_leaf"), "{text}");
    assert!(first.contains("-50.00"), "{first}");
    let folded = std::fs::read_to_string(out.join("diff.folded")).unwrap();
    assert!(folded.contains("main;new_thing 0 10\n"), "{folded}");
    assert!(folded.contains("main;work;mix_leaf 80 30\n"), "{folded}");
    let svg = std::fs::read_to_string(out.join("flamegraph.diff.svg")).unwrap();
    assert!(
        svg.contains("<title>mix_leaf (30 samples, 30.00%; -50.00%)</title>"),
        "{svg}"
    );
    let csv = std::fs::read_to_string(out.join("diff.csv")).unwrap();
    assert!(
        csv.lines().nth(1).unwrap().starts_with("\"mix_leaf\",80,30,"),
        "{csv}"
    );

    // qperf.bin against folded works too (the ELF applies to the qperf input).
    let o = perfscope(&[
        "diff",
        &asset("tinyk-riscv64.folded"),
        &asset("tinyk-riscv64.qperf.bin"),
        "--elf",
        &asset("tinyk-riscv64.elf"),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("baseline 1435 samples, comparison 1435 samples"),
        "{}",
        stdout(&o)
    );
}
