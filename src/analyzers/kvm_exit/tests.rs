use super::*;
use crate::analyzers::test_events::{Value, event, kvm_entry, kvm_exit, record};

const US: u64 = 1_000;
const GUEST_KERNEL_RIP: i64 = 0xffff_ffff_8100_0000_u64 as i64;

fn analyzer(perins: bool, than_ns: Option<u64>) -> KvmExitAnalyzer {
    KvmExitAnalyzer::new(
        &[kvm_exit(), kvm_entry()],
        KvmExitConfig {
            threads: false,
            perins,
            than_ns,
            slow_pair_capacity: 16,
        },
    )
    .unwrap()
}

fn exit(a: &mut KvmExitAnalyzer, at_us: u64, cpu: u32, tid: u32, reason: i64, isa: i64, rip: i64) {
    let raw = record(
        &kvm_exit(),
        tid,
        &[
            ("exit_reason", Value::Int(reason)),
            ("isa", Value::Int(isa)),
            ("guest_rip", Value::Int(rip)),
        ],
    );
    a.feed(&event(0, at_us * US, cpu, tid, &raw));
}

fn entry(a: &mut KvmExitAnalyzer, at_us: u64, cpu: u32, tid: u32) {
    let raw = record(&kvm_entry(), tid, &[]);
    a.feed(&event(1, at_us * US, cpu, tid, &raw));
}

/// (name, calls, total µs, max µs, %gsys) per row, in table order.
fn summary(a: &KvmExitAnalyzer, rows: &AnalysisRows) -> Vec<(&'static str, u64, u64, u64, u64)> {
    a.tabulate(rows)
        .rows
        .iter()
        .map(|r| {
            (
                r.name(),
                r.stats.calls(),
                r.stats.total_ns() / US,
                r.stats.histogram.max().unwrap_or(0) / US,
                r.gsys_percent().round() as u64,
            )
        })
        .collect()
}

#[test]
fn exits_pair_with_the_next_entry_of_the_same_thread_per_cpu_largest_total_first() {
    let mut a = analyzer(false, None);
    exit(&mut a, 0, 0, 100, 12, 1, GUEST_KERNEL_RIP); // HLT, 500 µs, guest kernel
    exit(&mut a, 10, 1, 200, 30, 1, 0x4000); // IO_INSTRUCTION on CPU 1, user rip
    entry(&mut a, 25, 1, 200); // 15 µs
    entry(&mut a, 500, 0, 100);
    exit(&mut a, 600, 0, 100, 30, 1, GUEST_KERNEL_RIP);
    entry(&mut a, 601, 0, 999); // another thread's entry: not this exit's
    entry(&mut a, 605, 0, 100); // 5 µs
    entry(&mut a, 700, 0, 100); // no exit pending: ignored
    exit(&mut a, 800, 0, 100, 0x7c, 2, 0); // SVM EXIT_MSR
    entry(&mut a, 803, 0, 100);
    let rows = a.take_rows();
    assert_eq!(
        summary(&a, &rows),
        [
            ("HLT", 1, 500, 500, 100),
            ("IO_INSTRUCTION", 2, 20, 15, 25),
            ("EXIT_MSR", 1, 3, 3, 0),
        ]
    );
    assert!(a.take_rows().is_empty(), "each interval starts over");
}

#[test]
fn a_loss_drops_the_pending_exit_and_perins_splits_by_cpu() {
    let mut a = analyzer(true, None);
    exit(&mut a, 0, 0, 100, 10, 1, 0);
    a.lost(US, 2 * US);
    entry(&mut a, 50, 0, 100); // its exit may not be the one before the loss
    exit(&mut a, 60, 0, 100, 10, 1, 0);
    entry(&mut a, 70, 0, 100);
    exit(&mut a, 60, 1, 101, 10, 1, 0);
    entry(&mut a, 90, 1, 101);
    let table = a.tabulate(&a.rows());
    let rows: Vec<(Option<u64>, &str, u64)> = table
        .rows
        .iter()
        .map(|r| (r.instance, r.name(), r.stats.total_ns() / US))
        .collect();
    assert_eq!(rows, [(Some(1), "CPUID", 30), (Some(0), "CPUID", 10)]);
}

#[test]
fn than_keeps_slow_pairs_except_halts() {
    let mut a = analyzer(false, Some(100 * US));
    exit(&mut a, 0, 0, 100, 12, 1, 0); // HLT 1 ms: not listed
    entry(&mut a, 1000, 0, 100);
    exit(&mut a, 2000, 0, 100, 48, 1, 0); // EPT_VIOLATION 200 µs: listed
    entry(&mut a, 2200, 0, 100);
    exit(&mut a, 3000, 0, 100, 48, 1, 0); // 50 µs: under the threshold
    entry(&mut a, 3050, 0, 100);
    let (pairs, dropped) = a.take_slow_pairs();
    let listed: Vec<(u64, u64)> = pairs
        .iter()
        .map(|p| (p.first.time_ns / US, p.latency_ns / US))
        .collect();
    assert_eq!((listed, dropped), (vec![(2000, 200)], 0));
    let table = a.tabulate(&a.rows());
    let than: Vec<(&str, u64)> = table.rows.iter().map(|r| (r.name(), r.stats.than)).collect();
    assert_eq!(than, [("HLT", 1), ("EPT_VIOLATION", 1)]);
}

#[test]
fn reasons_are_named_as_perf_prof_names_them() {
    assert_eq!(exit_reason_name(ISA_VMX, 12), "HLT");
    assert_eq!(exit_reason_name(ISA_VMX, 48), "EPT_VIOLATION");
    assert_eq!(exit_reason_name(ISA_VMX, 5), "UNKNOWN");
    assert_eq!(exit_reason_name(ISA_SVM, 0x78), "EXIT_HLT");
    assert_eq!(exit_reason_name(ISA_SVM, 0x7b), "EXIT_IOIO");
    assert_eq!(exit_reason_name(7, 1), "UNKNOWN-ISA");
    for table in [reasons::VMX, reasons::SVM] {
        assert!(
            table.windows(2).all(|w| w[0].0 < w[1].0),
            "sorted for the binary search"
        );
    }
}
