//! The kvm-exit table as perf-prof prints it: `<prefix>kvm-exit latency`, then
//! `%-*s %8s %16s %12s %12s %12s %12s %6s` headers (`exit_reason calls total(us) min(us)
//! avg(us) p99(us) max(us) %gsys`), the reason column 20 wide when the first row is a VMX
//! reason and 32 otherwise, rows `%-*s %8lu %16.3f %12.3f %12.3f %12.3f %12.3f %6.2f`,
//! then a blank line. `--perins` puts `[CPU] `/`[THREAD] ` before the header, `----- `/
//! `-------- ` before the dashes and `[%3d] `/`[%6d] ` before each row. No exit, no
//! table: perf-prof prints nothing at all then.

use std::fmt::Write;

use super::{WallClock, us};
use crate::analyzers::kvm_exit::{ISA_VMX, KvmExitTable};
use crate::model::period_counts::CountInstance;

pub fn kvm_exit_table(table: &KvmExitTable, wall: &WallClock) -> String {
    let mut out = String::new();
    let Some(first) = table.rows.first() else {
        return out;
    };
    let width = if first.isa == ISA_VMX { 20 } else { 32 };
    out.push_str(&wall.prefix());
    out.push_str("kvm-exit latency\n");
    let (header, dashes, cell) = match table.instance {
        Some(CountInstance::Cpu) => ("[CPU] ", "----- ", 3),
        Some(CountInstance::Thread) => ("[THREAD] ", "-------- ", 6),
        None => ("", "", 0),
    };
    let _ = writeln!(
        out,
        "{header}{:<width$} {:>8} {:>16} {:>12} {:>12} {:>12} {:>12} {:>6}",
        "exit_reason", "calls", "total(us)", "min(us)", "avg(us)", "p99(us)", "max(us)", "%gsys"
    );
    let _ = writeln!(
        out,
        "{dashes}{} {} {} {} {} {} {} {}",
        "-".repeat(width),
        "-".repeat(8),
        "-".repeat(16),
        "-".repeat(12),
        "-".repeat(12),
        "-".repeat(12),
        "-".repeat(12),
        "-".repeat(6)
    );
    for row in &table.rows {
        if let Some(instance) = row.instance {
            let _ = write!(out, "[{instance:>cell$}] ");
        }
        let h = &row.stats.histogram;
        // perf-prof's avg is the double sum / n.
        let avg_us = row.stats.total_ns() as f64 / row.stats.calls().max(1) as f64 / 1000.0;
        let _ = writeln!(
            out,
            "{:<width$} {:>8} {:>16} {:>12} {:>12.3} {:>12} {:>12} {:>6.2}",
            row.name(),
            row.stats.calls(),
            us(row.stats.total_ns()),
            us(h.min().unwrap_or(0)),
            avg_us,
            us(h.percentile(99.0).unwrap_or(0)),
            us(h.max().unwrap_or(0)),
            row.gsys_percent()
        );
    }
    out.push('\n');
    out
}

/// The one line kvm-exit prints (on stdout, once) when a print finds no VM exit since
/// the start: perf-prof prints nothing at all then, which reads like a hang. "Or" because
/// a VM may run without exits reaching the tracepoint: a software KVM (`kvm_pvm`)
/// emulating a real-mode guest fires none. On stdout,
/// as perf-prof's own notices (`... filters '...' in userspace`): its scripts and test
/// harness fail a run on any stderr line, and an idle host is not an error.
pub const NO_VM_NOTICE: &str =
    "kvm-exit: no VM exit seen: no VM is running here, or its exits do not reach kvm:kvm_exit\n";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzers::kvm_exit::{ISA_SVM, KvmExitRow};
    use crate::model::latency_stats::LatencyStats;

    fn row(instance: Option<u64>, isa: u32, reason: u32, values_ns: &[u64], gsys_ns: u64) -> KvmExitRow {
        let mut stats = LatencyStats::default();
        for &v in values_ns {
            stats.record(v, None);
        }
        stats.extra_ns = gsys_ns;
        KvmExitRow {
            instance,
            isa,
            reason,
            stats,
        }
    }

    fn wall() -> WallClock {
        WallClock {
            year: 2026,
            month: 12,
            day: 5,
            hour: 12,
            minute: 0,
            second: 1,
            microsecond: 42,
        }
    }

    #[test]
    fn vmx_rows_print_a_20_column_reason_and_gsys() {
        let table = KvmExitTable {
            instance: None,
            rows: vec![
                row(None, ISA_VMX, 12, &[620, 4_000], 4_620),
                row(None, ISA_VMX, 32, &[320, 1_000, 8_450], 0),
            ],
        };
        assert_eq!(
            kvm_exit_table(&table, &wall()),
            "2026-12-05 12:00:01.000042 kvm-exit latency\n\
             exit_reason             calls        total(us)      min(us)      avg(us)      p99(us)      max(us)  %gsys\n\
             -------------------- -------- ---------------- ------------ ------------ ------------ ------------ ------\n\
             HLT                         2            4.620        0.620        2.310        4.000        4.000 100.00\n\
             MSR_WRITE                   3            9.770        0.320        3.257        8.450        8.450   0.00\n\
             \n"
        );
    }

    #[test]
    fn svm_rows_are_32_wide_and_perins_adds_the_instance() {
        let table = KvmExitTable {
            instance: Some(CountInstance::Cpu),
            rows: vec![row(Some(3), ISA_SVM, 0x7b, &[1_120], 560)],
        };
        let text = kvm_exit_table(&table, &wall());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "[CPU] exit_reason                         calls        total(us)      min(us)      avg(us)      p99(us)      max(us)  %gsys"
        );
        assert_eq!(&lines[2][..39], format!("----- {} ", "-".repeat(32)));
        assert_eq!(
            lines[3],
            "[  3] EXIT_IOIO                               1            1.120        1.120        1.120        1.120        1.120  50.00"
        );
        assert_eq!(
            kvm_exit_table(&KvmExitTable::default(), &wall()),
            "",
            "no exit: nothing"
        );
    }
}
