//! True stacks on StarryOS-shaped guest kernels, by default (issue 24 §3), on real QEMU.
//! The test kernel's `starry MS` (tests/guest/README.md) reproduces what the real kernel
//! showed: a task started with its return address = its entry function, a trap entry
//! without CFI whose return label is followed by a frame-pointer register holding data, a
//! CPU halted in WFI/HLT/`idle`, an assembly routine sampled at several offsets. Each
//! architecture runs it with the default callchain on its kernel with frame pointers and on
//! the one without, and with `--callchain fp` forced on the latter.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use common::guest::{
    GuestArch, TestGuest, build_test_guest_for, build_test_guest_without_frame_pointers, symbol_range,
};
use common::plugin::{output_ok, perfscope_qemu};
use common::profile::{folded_lines, read_json};
use common::{OnceCache, once_per};
use object::{Object, ObjectSymbol, SymbolKind};
use perfscope::sources::qperf_file::{Callchain, QperfRecord, read_file};

const FREQ: u64 = 997;
/// Each phase of `starry` runs this long (idle twice as long).
const PHASE_MS: u64 = 300;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kernel {
    FramePointers,
    NoFramePointers,
}

/// The markers that cut a run's workload window.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Window {
    /// `starry` from STARRY_START to STARRY_END.
    Whole,
    /// The idle phase: from the line the irq phase ends with to the idle phase's own.
    Idle,
}

impl Window {
    fn markers(self) -> [&'static str; 2] {
        match self {
            Window::Whole => ["STARRY_START", "STARRY_END"],
            Window::Idle => ["STARRY_IRQ", "STARRY_IDLE"],
        }
    }
}

/// One `perfscope qemu --no-tui` run of `starry PHASE_MS` between its markers.
struct StarryRun {
    _dir: tempfile::TempDir,
    guest: TestGuest,
    latest: PathBuf,
    stderr: String,
}

impl StarryRun {
    fn qperf(&self, file: &str) -> PathBuf {
        self.latest.join("qperf").join(file)
    }

    fn workload(&self) -> Vec<(String, u64)> {
        folded_lines(&self.qperf("stack.workload.folded"))
    }

    fn records(&self) -> Vec<QperfRecord> {
        read_file(self.qperf("qperf.bin")).expect("read qperf.bin").0
    }
}

fn guest(arch: GuestArch, kernel: Kernel) -> TestGuest {
    match kernel {
        Kernel::FramePointers => build_test_guest_for(arch),
        Kernel::NoFramePointers => build_test_guest_without_frame_pointers(arch),
    }
}

/// The run of `starry` on `arch`'s `kernel` with `--callchain callchain` (`None`: the
/// default), once per test process.
fn starry(arch: GuestArch, kernel: Kernel, callchain: Option<&'static str>) -> &'static StarryRun {
    starry_in(arch, kernel, callchain, Window::Whole)
}

fn starry_in(
    arch: GuestArch,
    kernel: Kernel,
    callchain: Option<&'static str>,
    window: Window,
) -> &'static StarryRun {
    type Key = (GuestArch, Kernel, Option<&'static str>, Window);
    static RUNS: OnceCache<Key, StarryRun> = Mutex::new(Vec::new());
    once_per(&RUNS, (arch, kernel, callchain, window))
        .get_or_init(|| run(guest(arch, kernel), callchain, window))
}

fn run(guest: TestGuest, callchain: Option<&str>, window: Window) -> StarryRun {
    let [start, stop] = window.markers();
    let dir = tempfile::tempdir().unwrap();
    let mut command = perfscope_qemu(&guest, dir.path());
    command
        .args(["--freq", &FREQ.to_string()])
        .args(["--shell-prefix", "starry:~# "])
        .args(["--workload", &format!("starry {PHASE_MS}")])
        .args(["--start-marker", start, "--stop-marker", stop])
        .args(["--timeout", "90"]);
    if let Some(callchain) = callchain {
        command.args(["--callchain", callchain]);
    }
    let o = output_ok(&mut command, &format!("perfscope qemu starry ({callchain:?})"));
    StarryRun {
        latest: dir.path().join(format!("perf/{}/latest", guest.arch.name())),
        _dir: dir,
        guest,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The callchain the run chose, as stderr, report.json and the plugin's summary say it.
fn assert_chose(run: &StarryRun, method: &str, because: &str) {
    let line = format!("perfscope qemu: callchain {method} (default): kernel.elf {because}");
    assert!(
        run.stderr.contains(&line),
        "no `{line}` in stderr:\n{}",
        run.stderr
    );
    let report = read_json(&run.latest.join("report.json"));
    assert_eq!(report["callchain_choice"]["method"], method, "{report:#}");
    assert_eq!(report["callchain_choice"]["chosen_by"], "default");
    assert_eq!(report["parameters"]["callchain"], method);
    let summary = std::fs::read_to_string(run.qperf("qperf.summary.txt")).unwrap();
    assert!(
        summary.contains(&format!("callchain_method = {method}\n")),
        "{summary}"
    );
}

fn default_callchain_follows_the_kernel(arch: GuestArch) {
    assert_chose(
        starry(arch, Kernel::FramePointers, None),
        "fp",
        "keeps frame pointers",
    );
    let nofp = starry(arch, Kernel::NoFramePointers, None);
    assert_chose(nofp, "dwarf", "keeps no frame pointers");
    assert!(nofp.stderr.contains("and has .debug_frame"), "{}", nofp.stderr);
}

/// Every stack through the task's work starts at its entry function (the return into
/// task_entry's body), never at the function before it or at the entry twice.
fn task_root_is_its_entry(run: &StarryRun) {
    let task: Vec<_> = run
        .workload()
        .into_iter()
        .filter(|(s, _)| s.split(';').any(|f| f == "task_main"))
        .collect();
    let samples: u64 = task.iter().map(|(_, n)| n).sum();
    // How many depends on how much CPU QEMU got (a busy host skips ticks): a few suffice.
    assert!(samples >= 20, "{samples} task samples: {task:?}");
    for (stack, _) in &task {
        assert!(stack.starts_with("task_entry;task_main"), "{stack} ({task:?})");
    }
}

fn a_task_started_at_its_entry_has_it_as_root(arch: GuestArch) {
    task_root_is_its_entry(starry(arch, Kernel::NoFramePointers, None));
    task_root_is_its_entry(starry(arch, Kernel::FramePointers, None));
}

/// `[start, end)` of the kernel's text and the names of its data symbols.
fn text_and_data(elf: &Path) -> ((u64, u64), Vec<String>) {
    let bytes = std::fs::read(elf).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let data = file
        .symbols()
        .filter(|s| s.kind() == SymbolKind::Data)
        .filter_map(|s| Some(s.name().ok()?.to_string()))
        .filter(|n| !n.is_empty())
        .collect();
    let (start, _) = symbol_range(elf, "_stext");
    let (end, _) = symbol_range(elf, "_etext");
    ((start, end), data)
}

/// No return address the plugin recorded lies outside the kernel's text, and no frame the
/// profile shows is a raw address, `[unknown]` or a data symbol.
fn no_frame_outside_known_code(run: &StarryRun) {
    let ((start, end), data) = text_and_data(&run.guest.elf);
    let text = start..end;
    let records = run.records();
    let kernel_walks = records
        .iter()
        .filter(|r| r.trace.first().is_some_and(|pc| text.contains(pc)));
    for record in kernel_walks {
        for &ret in &record.trace[1..] {
            assert!(
                text.contains(&ret),
                "return address {ret:#x} outside the text in {record:x?}"
            );
        }
    }
    for (stack, n) in folded_lines(&run.qperf("stack.folded")) {
        for frame in stack.split(';') {
            assert!(
                !frame.starts_with("0x") && frame != "[unknown]" && !data.iter().any(|d| d == frame),
                "frame `{frame}` is no code: {stack} {n}"
            );
        }
    }
    // The interrupt handler and the victim whose frame-pointer register points at data
    // were sampled: the shapes that made garbage roots. (How often depends on how much CPU
    // QEMU got: on a busy host the handler's share of the guest's time grows.)
    let workload = run.workload();
    let weight = |function: &str| -> u64 {
        workload
            .iter()
            .filter(|(s, _)| s.split(';').any(|f| f == function))
            .map(|(_, n)| n)
            .sum()
    };
    // At least one sample of each is what makes the checks above mean something; how many
    // more depends on how much CPU QEMU got from the host.
    assert!(weight("irq_work") >= 1, "{workload:?}");
    assert!(weight("victim_spin") >= 1, "{workload:?}");
}

fn no_frame_is_outside_known_code(arch: GuestArch) {
    no_frame_outside_known_code(starry(arch, Kernel::NoFramePointers, None));
    no_frame_outside_known_code(starry(arch, Kernel::NoFramePointers, Some("fp")));
    no_frame_outside_known_code(starry(arch, Kernel::FramePointers, None));
}

/// The trap entry has no CFI: with dwarf the handler's stacks end at it, the trap's root.
fn dwarf_trap_stacks_end_at_the_trap_entry(arch: GuestArch) {
    let workload = starry(arch, Kernel::NoFramePointers, None).workload();
    let irq: Vec<_> = workload
        .iter()
        .filter(|(s, _)| s.ends_with(";irq_work"))
        .collect();
    assert!(!irq.is_empty(), "{workload:?}");
    for (stack, _) in irq {
        assert_eq!(stack, "trap_vector_base;handle_irq;irq_work", "{workload:?}");
    }
}

/// Halted time is `[idle]`, at the sampling rate: in the idle phase's window nearly every
/// sample is `[idle]` (one per tick of the plugin's timer: before, a halted vCPU took none
/// and the wake-up's first block took the tick), and there are about FREQ per second.
fn halted_time_is_idle(run: &StarryRun) {
    let workload = run.workload();
    let idle: u64 = workload
        .iter()
        .filter(|(s, _)| s == "[idle]")
        .map(|(_, n)| n)
        .sum();
    let all: u64 = workload.iter().map(|(_, n)| n).sum();
    let window = read_json(&run.qperf("window.json"));
    let seconds = window["duration_sec"].as_f64().expect("the idle phase's window");
    let ticks = FREQ as f64 * seconds;
    eprintln!(
        "{}: {idle} [idle] of {all} samples in the idle phase's {seconds:.3} s ({ticks:.0} ticks)",
        run.latest.display()
    );
    // The window's edges are console lines stamped as perfscope reads them: a few samples
    // of the code around the phase fall inside.
    assert!(idle * 100 >= all * 90, "{idle} of {all}: {workload:?}");
    // The tick thread may run late on a loaded host (fewer ticks, for idle and running
    // vCPUs alike): the share above is the sharp check; this only rules out a rate far
    // from the sampling rate.
    assert!(
        idle as f64 >= ticks * 0.5 && idle as f64 <= ticks * 1.05 + 3.0,
        "{idle} [idle] samples for {ticks:.0} ticks"
    );
    let stats = read_json(&run.qperf("resolve.workload.stats.json"));
    assert_eq!(stats["idle_records"], idle, "{stats:#}");
    let summary = std::fs::read_to_string(run.qperf("qperf.summary.txt")).unwrap();
    let recorded: u64 = summary
        .lines()
        .find_map(|l| l.strip_prefix("idle_samples = "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no idle_samples in {summary}"));
    assert!(recorded >= idle, "{recorded} < {idle}");
}

fn halted_time_is_idle_at_the_sampling_rate(arch: GuestArch) {
    halted_time_is_idle(starry_in(arch, Kernel::NoFramePointers, None, Window::Idle));
    halted_time_is_idle(starry_in(arch, Kernel::FramePointers, None, Window::Idle));
}

/// asm_spin, sampled at several of its blocks' addresses, is one frame.
fn an_assembly_routine_is_one_frame(arch: GuestArch) {
    let run = starry(arch, Kernel::NoFramePointers, None);
    let (start, end) = symbol_range(&run.guest.elf, "asm_spin");
    let mut offsets: Vec<u64> = run
        .records()
        .iter()
        .filter_map(|r| r.trace.first().copied())
        .filter(|pc| (start..end).contains(pc))
        .map(|pc| pc - start)
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    assert!(offsets.len() >= 2, "asm_spin sampled at {offsets:x?} only");
    let frames: Vec<String> = folded_lines(&run.qperf("stack.folded"))
        .iter()
        .flat_map(|(s, _)| s.split(';').map(str::to_string).collect::<Vec<_>>())
        .filter(|f| f.starts_with("asm_spin") || f.starts_with("trap_vector_base"))
        .collect();
    assert!(frames.iter().any(|f| f == "asm_spin"), "{frames:?}");
    for frame in frames {
        assert!(
            frame == "asm_spin" || frame == "trap_vector_base",
            "{frame}: a frame per offset"
        );
    }
}

/// max_depth and avg_depth count the same thing: the mean of stack-depth-summary's
/// histogram, never above its maximum.
fn depth_has_one_definition(arch: GuestArch) {
    let run = starry(arch, Kernel::NoFramePointers, None);
    let stats = read_json(&run.qperf("resolve.workload.stats.json"));
    let csv = std::fs::read_to_string(run.qperf("stack-depth-summary.workload.csv")).unwrap();
    let (mut samples, mut sum, mut max) = (0u64, 0u64, 0u64);
    for line in csv.lines().skip(1) {
        let (depth, n) = line.split_once(',').expect("depth,samples");
        let (depth, n): (u64, u64) = (depth.parse().unwrap(), n.parse().unwrap());
        samples += n;
        sum += depth * n;
        max = max.max(depth);
    }
    let avg = stats["avg_depth"].as_f64().unwrap();
    assert_eq!(stats["max_depth"], max, "{stats:#}");
    assert!((avg - sum as f64 / samples as f64).abs() < 1e-6, "{avg} vs {csv}");
    assert!(avg <= max as f64);
    let (avg_frames, max_frames) = (
        stats["avg_frames"].as_f64().unwrap(),
        stats["max_frames"].as_u64().unwrap(),
    );
    assert!(avg_frames <= max_frames as f64, "{stats:#}");
    assert_eq!(stats["callchain"]["avg_depth"], stats["avg_depth"]);
}

#[test]
fn riscv64_default_callchain_follows_the_kernel() {
    default_callchain_follows_the_kernel(GuestArch::Riscv64);
}

#[test]
fn loongarch64_default_callchain_follows_the_kernel() {
    default_callchain_follows_the_kernel(GuestArch::Loongarch64);
}

#[test]
fn x86_64_default_callchain_follows_the_kernel() {
    default_callchain_follows_the_kernel(GuestArch::X86_64);
}

#[test]
fn riscv64_a_task_started_at_its_entry_has_it_as_root() {
    a_task_started_at_its_entry_has_it_as_root(GuestArch::Riscv64);
}

#[test]
fn loongarch64_a_task_started_at_its_entry_has_it_as_root() {
    a_task_started_at_its_entry_has_it_as_root(GuestArch::Loongarch64);
}

#[test]
fn x86_64_a_task_started_at_its_entry_has_it_as_root() {
    a_task_started_at_its_entry_has_it_as_root(GuestArch::X86_64);
}

#[test]
fn riscv64_no_frame_is_outside_known_code() {
    no_frame_is_outside_known_code(GuestArch::Riscv64);
}

#[test]
fn loongarch64_no_frame_is_outside_known_code() {
    no_frame_is_outside_known_code(GuestArch::Loongarch64);
}

#[test]
fn x86_64_no_frame_is_outside_known_code() {
    no_frame_is_outside_known_code(GuestArch::X86_64);
}

#[test]
fn riscv64_dwarf_trap_stacks_end_at_the_trap_entry() {
    dwarf_trap_stacks_end_at_the_trap_entry(GuestArch::Riscv64);
}

#[test]
fn loongarch64_dwarf_trap_stacks_end_at_the_trap_entry() {
    dwarf_trap_stacks_end_at_the_trap_entry(GuestArch::Loongarch64);
}

#[test]
fn x86_64_dwarf_trap_stacks_end_at_the_trap_entry() {
    dwarf_trap_stacks_end_at_the_trap_entry(GuestArch::X86_64);
}

#[test]
fn riscv64_halted_time_is_idle_at_the_sampling_rate() {
    halted_time_is_idle_at_the_sampling_rate(GuestArch::Riscv64);
}

#[test]
fn loongarch64_halted_time_is_idle_at_the_sampling_rate() {
    halted_time_is_idle_at_the_sampling_rate(GuestArch::Loongarch64);
}

#[test]
fn x86_64_halted_time_is_idle_at_the_sampling_rate() {
    halted_time_is_idle_at_the_sampling_rate(GuestArch::X86_64);
}

#[test]
fn riscv64_an_assembly_routine_is_one_frame() {
    an_assembly_routine_is_one_frame(GuestArch::Riscv64);
}

#[test]
fn loongarch64_an_assembly_routine_is_one_frame() {
    an_assembly_routine_is_one_frame(GuestArch::Loongarch64);
}

#[test]
fn x86_64_an_assembly_routine_is_one_frame() {
    an_assembly_routine_is_one_frame(GuestArch::X86_64);
}

#[test]
fn riscv64_depth_has_one_definition() {
    depth_has_one_definition(GuestArch::Riscv64);
}

#[test]
fn loongarch64_depth_has_one_definition() {
    depth_has_one_definition(GuestArch::Loongarch64);
}

#[test]
fn x86_64_depth_has_one_definition() {
    depth_has_one_definition(GuestArch::X86_64);
}

/// A kernel with neither frame pointers nor CFI: the default is the sampled address alone,
/// and every place that says the choice says why and warns.
#[test]
fn riscv64_default_without_frame_pointers_or_cfi_is_leaf_with_a_warning() {
    let g = build_test_guest_without_frame_pointers(GuestArch::Riscv64);
    let dir = tempfile::tempdir().unwrap();
    let stripped = dir.path().join("kernel.elf");
    let status = Command::new("riscv64-unknown-elf-objcopy")
        .args(["--remove-section", ".debug_frame"])
        .arg(&g.elf)
        .arg(&stripped)
        .status()
        .expect("riscv64-unknown-elf-objcopy: run scripts/install-test-deps.sh");
    assert!(status.success());
    let run = run(TestGuest { elf: stripped, ..g }, None, Window::Whole);
    assert_chose(&run, "leaf", "keeps no frame pointers");
    assert!(
        run.stderr.contains("and has no .eh_frame or .debug_frame"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("perfscope qemu: warning: no call stacks:"),
        "{}",
        run.stderr
    );
    let report = read_json(&run.latest.join("report.json"));
    let warnings = report["window"]["warnings"].to_string();
    assert!(warnings.contains("no call stacks"), "{report:#}");
    // Leaf: every record is its sampled address alone (an idle tick has none).
    for record in run.records() {
        assert!(record.trace.len() <= 1, "{record:x?}");
    }
}

/// The TUI's status line says the callchain and that the default chose it.
#[test]
fn riscv64_the_status_line_says_the_default_callchain() {
    let guest = build_test_guest_without_frame_pointers(GuestArch::Riscv64);
    let plugin = common::plugin::build_plugin();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let command = format!(
        "{} qemu --arch riscv64 --kernel {} --elf {} --plugin {} --freq 997 \
         --shell-prefix 'starry:~# ' --refresh-ms 250 --out {}; echo perfscope-exit=$?; sleep 60",
        env!("CARGO_BIN_EXE_perfscope"),
        guest.bin.display(),
        guest.elf.display(),
        plugin.display(),
        out.path().display()
    );
    let tmux = common::tmux::TmuxSession::start("perfscope-callchain", 200, 30, root, &command);
    let wait = Duration::from_secs(60);
    let screen = tmux.wait_for("the status line's callchain", wait, |s| {
        s.contains("starry:~#") && s.contains("callchain dwarf (default)")
    });
    assert!(!screen.contains("callchain fp"), "{screen}");
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", wait, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
}

// The record of an idle tick decodes as such (the plugin writes byte 3).
#[test]
fn idle_records_decode_as_idle() {
    let run = starry(GuestArch::Riscv64, Kernel::NoFramePointers, None);
    let idle = run
        .records()
        .into_iter()
        .filter(|r| r.callchain == Some(Callchain::Idle))
        .collect::<Vec<_>>();
    assert!(!idle.is_empty());
    for record in idle {
        assert!(record.trace.is_empty() && record.pc == 0, "{record:x?}");
    }
}
