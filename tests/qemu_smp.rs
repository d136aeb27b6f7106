//! SMP guests on real QEMU. The test kernel started with `--smp 2` brings up its second CPU
//! (riscv64: SBI HSM hart_start; loongarch64: the IPI mailbox of QEMU's boot code) and runs
//! every bench on both. perfscope must sample each vCPU at the asked frequency (one flag per
//! vCPU, raised by the plugin's timer), starve none, unwind each on its own stack, and show
//! them as per-vCPU instance panes in the terminal.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::guest::{GuestArch, build_test_guest_for};
use common::plugin::{build_plugin, output_ok, perfscope_qemu};
use common::profile::{KernelSymbols, read_json};
use common::tmux::TmuxSession;
use perfscope::sources::qperf_file::{ReadEnd, read_file};

const FREQ: u64 = 1000;

/// One SMP guest at a time: two busy vCPU threads already fill this machine's two cores,
/// and a vCPU thread waiting for a core misses its ticks.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `perfscope qemu --smp 2 --no-tui` with `bench 300` between the markers; the run's
/// directory (`perf/<arch>/latest`).
fn smp_run(arch: GuestArch, out: &Path) -> PathBuf {
    let g = build_test_guest_for(arch);
    output_ok(
        perfscope_qemu(&g, out)
            .args(["--smp", "2", "--freq", &FREQ.to_string(), "--callchain", "fp"])
            .args(["--shell-prefix", "starry:~# ", "--workload", "bench 300"])
            .args(["--start-marker", "BENCH_START", "--stop-marker", "BENCH_END"])
            .args(["--timeout", "120"]),
        "perfscope qemu --smp 2",
    );
    out.join(format!("perf/{}/latest", arch.name()))
}

/// Both vCPUs ran the bench, each was sampled at close to the asked rate inside the window,
/// neither far behind the other, and each unwinds to the bench from its own entry point.
fn assert_each_vcpu_sampled_at_the_asked_frequency(arch: GuestArch) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = tempfile::tempdir().unwrap();
    let latest = smp_run(arch, out.path());
    let console = std::fs::read_to_string(latest.join("profile.stdout")).unwrap();
    assert!(console.contains("tinyk: 2 CPUs online"), "{console}");
    assert!(
        console.contains("cpus=2 ms="),
        "both CPUs ran the bench: {console}"
    );

    let window = read_json(&latest.join("qperf/window.json"));
    let start_ns = (window["start_time"].as_f64().unwrap() * 1e9) as u64;
    let stop_ns = (window["stop_time"].as_f64().unwrap() * 1e9) as u64;
    let seconds = (stop_ns - start_ns) as f64 / 1e9;
    let (records, report) = read_file(latest.join("qperf/qperf.bin")).unwrap();
    assert_eq!(report.end, ReadEnd::CleanEof);
    let symbols = KernelSymbols::open(&build_test_guest_for(arch).elf);
    let mut per_vcpu: HashMap<u32, Vec<String>> = HashMap::new();
    for r in &records {
        if r.elapsed_ns.is_some_and(|t| (start_ns..=stop_ns).contains(&t)) {
            let cpu = r.cpu.expect("v3 records carry the vCPU");
            per_vcpu.entry(cpu).or_default().push(symbols.path(r));
        }
    }
    let mut cpus: Vec<u32> = per_vcpu.keys().copied().collect();
    cpus.sort_unstable();
    assert_eq!(cpus, [0, 1], "samples from exactly vCPUs 0 and 1");
    let expected = FREQ as f64 * seconds;
    let counts: Vec<usize> = cpus.iter().map(|c| per_vcpu[c].len()).collect();
    let summary = std::fs::read_to_string(latest.join("qperf/qperf.summary.txt")).unwrap();
    eprintln!(
        "{} --smp 2: window {seconds:.3} s, expected ≈{expected:.0} samples per vCPU at {FREQ} Hz, got {counts:?}; {}",
        arch.name(),
        summary
            .lines()
            .find(|l| l.starts_with("skipped_samples"))
            .unwrap_or("")
    );
    for (cpu, n) in cpus.iter().zip(&counts) {
        // A vCPU that runs gets a sample every tick; ticks are lost only while its host
        // thread (or the timer's) waits for a core: two vCPU threads, the timer and
        // perfscope share two, ~0.9 of the ticks on a quiet machine, 0.44 beside two busy
        // loops. The bound says the vCPU was sampled through the window, not how fast the
        // machine is.
        assert!(
            *n as f64 >= 0.2 * expected,
            "vCPU {cpu}: {n} samples in {seconds:.3} s at {FREQ} Hz"
        );
        assert!(
            *n as f64 <= 1.1 * expected + 5.0,
            "vCPU {cpu}: {n} samples is more than one per tick"
        );
    }
    let (low, high) = (counts[0].min(counts[1]), counts[0].max(counts[1]));
    assert!(low * 2 >= high, "a vCPU is starved: {counts:?}");
    // Each vCPU unwinds on its own stack to its own entry point: one booted (kmain; on
    // riscv64 OpenSBI's lottery picks which hart), the other was started (secondary_main).
    // The boot CPU also spends the end of the window waiting in kmain for the other.
    let mut roots = Vec::new();
    for cpu in &cpus {
        let paths = &per_vcpu[cpu];
        let mut leaves: HashMap<&str, usize> = HashMap::new();
        for p in paths {
            *leaves.entry(p.rsplit(';').next().unwrap()).or_default() += 1;
        }
        let top = leaves.iter().max_by_key(|(_, n)| **n).map(|(f, _)| *f);
        assert_eq!(top, Some("mix_leaf"), "vCPU {cpu} leaves: {leaves:?}");
        let root = ["kmain;run_bench", "secondary_main;run_bench"]
            .into_iter()
            .max_by_key(|root| paths.iter().filter(|p| p.contains(root)).count())
            .unwrap();
        let under = paths.iter().filter(|p| p.contains(root)).count();
        assert!(
            under * 2 >= paths.len(),
            "vCPU {cpu}: {under} of {} samples under {root}",
            paths.len()
        );
        roots.push(root);
    }
    roots.sort_unstable();
    assert_eq!(roots, ["kmain;run_bench", "secondary_main;run_bench"]);
}

#[test]
fn riscv64_smp_each_vcpu_is_sampled_at_the_asked_frequency() {
    assert_each_vcpu_sampled_at_the_asked_frequency(GuestArch::Riscv64);
}

#[test]
fn loongarch64_smp_each_vcpu_is_sampled_at_the_asked_frequency() {
    assert_each_vcpu_sampled_at_the_asked_frequency(GuestArch::Loongarch64);
}

/// The instance view (`i`) splits the profile into one pane per vCPU, each with the bench's
/// hottest function.
#[test]
fn instance_panes_show_each_vcpu_in_the_terminal() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let guest = build_test_guest_for(GuestArch::Riscv64);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let command = format!(
        "{} qemu --arch riscv64 --smp 2 --kernel {} --elf {} --plugin {} --freq 1000 --callchain fp \
         --shell-prefix 'starry:~# ' --workload 'bench 300' --start-marker BENCH_START \
         --stop-marker BENCH_END --refresh-ms 250 --out {}; echo perfscope-exit=$?; sleep 60",
        env!("CARGO_BIN_EXE_perfscope"),
        guest.bin.display(),
        guest.elf.display(),
        build_plugin().display(),
        out.path().display()
    );
    let wait = Duration::from_secs(90);
    let tmux = TmuxSession::start("perfscope-smp", 100, 30, root, &command);
    tmux.wait_for("the automatic export", wait, |s| s.contains("exported"));
    tmux.keys(&["i"]);
    let screen = tmux.wait_for("one pane per vCPU", wait, |s| {
        s.contains("vCPU 0") && s.contains("vCPU 1")
    });
    assert!(
        screen.matches("mix_leaf").count() >= 2,
        "mix_leaf in each vCPU's pane:\n{screen}"
    );
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", wait, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
}
