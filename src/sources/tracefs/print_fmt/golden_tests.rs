//! Real events as perf-prof printed them on this kind of machine
//! (notes/perf-prof-outputs/), rebuilt as raw records through the 6.18 layouts of
//! tests/fixtures/tracefs: the renderer must give the same text.

use super::record::{Record, fixture};
use super::{EventPrinter, PrintFmt};
use crate::analyzers::text::{WallClock, event_line};
use crate::trace::event::EventLayout;

fn render(layout: &EventLayout, record: &Record<'_>) -> String {
    PrintFmt::compile(layout)
        .unwrap_or_else(|e| panic!("{}:{}: {e}", layout.system, layout.name))
        .render(&record.event())
        .expect("renders")
}

/// `dev` as the block layer stores it: major << 20 | minor.
const VDA: i64 = 254 << 20;

#[test]
fn raw_syscalls_as_perf_prof_prints_them() {
    let enter = fixture("raw_syscalls/sys_enter");
    let args = [4, 0x7f52_0004_0080, 0x40, 0xffff_ffff, 1, 0x7f52_0009_0080];
    let mut r = Record::new(&enter).int("id", 232);
    for (i, arg) in args.into_iter().enumerate() {
        r = r.element("args", i, arg);
    }
    assert_eq!(
        render(&enter, &r),
        "NR 232 (4, 7f5200040080, 40, ffffffff, 1, 7f5200090080)"
    );
    let exit = fixture("raw_syscalls/sys_exit");
    let r = Record::new(&exit).int("id", 232).int("ret", 1);
    assert_eq!(render(&exit, &r), "NR 232 = 1");
    let r = Record::new(&exit).int("id", 0).int("ret", -11);
    assert_eq!(render(&exit, &r), "NR 0 = -11");
}

#[test]
fn sched_events_as_perf_prof_prints_them() {
    let switch = fixture("sched/sched_switch");
    let cases = [
        (
            ("qemu-system-ris", 17980, 0x100, "rcu_preempt", 15),
            "prev_comm=qemu-system-ris prev_pid=17980 prev_prio=120 prev_state=R+ ==> next_comm=rcu_preempt next_pid=15 next_prio=120",
        ),
        (
            ("rcu_preempt", 15, 0x80, "bash", 17955),
            "prev_comm=rcu_preempt prev_pid=15 prev_prio=120 prev_state=I ==> next_comm=bash next_pid=17955 next_prio=120",
        ),
        (
            ("gdb worker", 18144, 0, "sh", 17791),
            "prev_comm=gdb worker prev_pid=18144 prev_prio=120 prev_state=R ==> next_comm=sh next_pid=17791 next_prio=120",
        ),
        (
            ("perf-prof", 21183, 1, "swapper/1", 0),
            "prev_comm=perf-prof prev_pid=21183 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
        ),
    ];
    for ((prev, prev_pid, state, next, next_pid), perf_prof) in cases {
        let r = Record::new(&switch)
            .text("prev_comm", prev)
            .int("prev_pid", prev_pid)
            .int("prev_prio", 120)
            .int("prev_state", state)
            .text("next_comm", next)
            .int("next_pid", next_pid)
            .int("next_prio", 120);
        assert_eq!(render(&switch, &r), perf_prof);
    }
    for name in ["sched_wakeup", "sched_wakeup_new"] {
        let wakeup = fixture(&format!("sched/{name}"));
        let r = Record::new(&wakeup)
            .text("comm", "gdb worker")
            .int("pid", 18145)
            .int("prio", 120)
            .int("target_cpu", 1);
        assert_eq!(
            render(&wakeup, &r),
            "comm=gdb worker pid=18145 prio=120 target_cpu=001"
        );
    }
    let exec = fixture("sched/sched_process_exec");
    let r = Record::new(&exec)
        .text("filename", "/usr/bin/sleep")
        .int("pid", 21275)
        .int("old_pid", 21275);
    assert_eq!(
        render(&exec, &r),
        "filename=/usr/bin/sleep pid=21275 old_pid=21275"
    );
    let runtime = fixture("sched/sched_stat_runtime");
    let r = Record::new(&runtime)
        .text("comm", "sh")
        .int("pid", 7)
        .int("runtime", 1500);
    assert_eq!(render(&runtime, &r), "comm=sh pid=7 runtime=1500 [ns]");
}

#[test]
fn block_events_as_perf_prof_prints_them() {
    let getrq = fixture("block/block_getrq");
    let r = Record::new(&getrq)
        .int("dev", VDA)
        .int("sector", 26_525_696)
        .int("nr_sector", 2048)
        .text("rwbs", "WS")
        .text("comm", "dd");
    assert_eq!(render(&getrq, &r), "254,0 WS 26525696 + 2048 [dd]");
    let issue = fixture("block/block_rq_issue");
    // ioprio: class 2 (BE) << 13, level 4. The format names the classes with enum names
    // it does not resolve, so the class prints in hex, as perf-prof shows it.
    let r = Record::new(&issue)
        .int("dev", VDA)
        .int("sector", 26_527_728)
        .int("nr_sector", 16)
        .int("bytes", 8192)
        .int("ioprio", (2 << 13) | 4)
        .text("rwbs", "WS")
        .text("comm", "kworker/1:1H")
        .text("cmd", "");
    assert_eq!(
        render(&issue, &r),
        "254,0 WS 8192 () 26527728 + 16 0x2,0,4 [kworker/1:1H]"
    );
}

#[test]
fn irq_timer_workqueue_and_kvm_events_render() {
    let softirq = fixture("irq/softirq_entry");
    let r = Record::new(&softirq).int("vec", 7);
    assert_eq!(render(&softirq, &r), "vec=7 [action=SCHED]");
    let handler = fixture("irq/irq_handler_entry");
    let r = Record::new(&handler).int("irq", 11).text("name", "virtio0");
    assert_eq!(render(&handler, &r), "irq=11 name=virtio0");
    let expire = fixture("timer/timer_expire_entry");
    let r = Record::new(&expire)
        .int("timer", 0xffff_8880_0123_4560u64 as i64)
        .int("now", 4_295_000_000)
        .int("function", 0xffff_ffff_8112_3450u64 as i64)
        .int("baseclk", 4_295_000_000);
    assert_eq!(
        render(&expire, &r),
        "timer=0xffff888001234560 function=0xffffffff81123450 now=4295000000 baseclk=4295000000"
    );
    let queue = fixture("workqueue/workqueue_queue_work");
    let r = Record::new(&queue)
        .int("work", 0xffff_8880_0000_1000u64 as i64)
        .int("function", 0)
        .text("workqueue", "events")
        .int("req_cpu", 8192)
        .int("cpu", 1);
    assert_eq!(
        render(&queue, &r),
        "work struct=0xffff888000001000 function=0x0 workqueue=events req_cpu=8192 cpu=1"
    );
    let entry = fixture("kvm/kvm_entry");
    let r = Record::new(&entry)
        .int("vcpu_id", 0)
        .int("rip", 0xffff_ffff_8100_1234u64 as i64)
        .int("intr_info", 0x8000_0030)
        .int("immediate_exit", 1);
    assert_eq!(
        render(&entry, &r),
        "vcpu 0, rip 0xffffffff81001234 intr_info 0x80000030 error_code 0x00000000[immediate exit]"
    );
    let exit = fixture("kvm/kvm_exit");
    let r = Record::new(&exit)
        .int("isa", 1)
        .int("exit_reason", 12)
        .int("guest_rip", 0x1000);
    assert_eq!(
        render(&exit, &r),
        "vcpu 0 reason HLT rip 0x1000 info1 0x0000000000000000 info2 0x0000000000000000 \
         intr_info 0x00000000 error_code 0x00000000 requests 0x0000000000000000"
    );
}

#[test]
fn whole_raw_lines_match_perf_prof() {
    let layouts = [fixture("raw_syscalls/sys_enter"), fixture("sched/sched_switch")];
    let printer = EventPrinter::new(&layouts);
    let mut enter = Record::new(&layouts[0]).int("id", 232);
    for (i, arg) in [4, 0x7f52_0004_0080, 0x40, 0xffff_ffff, 1, 0x7f52_0009_00b0]
        .into_iter()
        .enumerate()
    {
        enter = enter.element("args", i, arg);
    }
    // `...1`: preempt count 1.
    enter.raw[3] = 1;
    let mut event = enter.event();
    (event.time_ns, event.cpu, event.tid) = (2_423_212_872_000, 0, 17493);
    let wall = WallClock {
        year: 2026,
        month: 12,
        day: 2,
        hour: 15,
        minute: 45,
        second: 16,
        microsecond: 392_497,
    };
    let comm_of = |_: u32| Some("perf-prof".to_string());
    let fields = |e: &crate::trace::event::TraceEvent<'_>, l: &EventLayout| printer.fields_text(e, l);
    assert_eq!(
        event_line(&wall, ' ', &event, &layouts[0], &comm_of, &fields),
        "2026-12-02 15:45:16.392497          perf-prof  17493 ...1 [000] 2423.212872: raw_syscalls:sys_enter: NR 232 (4, 7f5200040080, 40, ffffffff, 1, 7f52000900b0)\n"
    );
    let switch = Record::new(&layouts[1])
        .text("prev_comm", "rcu_preempt")
        .int("prev_pid", 15)
        .int("prev_prio", 120)
        .int("prev_state", 0x80)
        .text("next_comm", "bash")
        .int("next_pid", 17955)
        .int("next_prio", 120);
    let mut raw = switch.raw.clone();
    // `d..3`: irqs off, preempt count 3.
    (raw[2], raw[3]) = (1, 3);
    let mut event = switch.event();
    event.raw = &raw;
    (event.time_ns, event.cpu, event.tid, event.event) =
        (2_462_461_183_000, 1, 15, crate::trace::event::EventIndex(1));
    let wall = WallClock {
        second: 55,
        microsecond: 640_826,
        ..wall
    };
    let comm_of = |_: u32| Some("rcu_preempt".to_string());
    assert_eq!(
        event_line(&wall, ' ', &event, &layouts[1], &comm_of, &fields),
        "2026-12-02 15:45:55.640826        rcu_preempt     15 d..3 [001] 2462.461183: sched:sched_switch: prev_comm=rcu_preempt prev_pid=15 prev_prio=120 prev_state=I ==> next_comm=bash next_pid=17955 next_prio=120\n"
    );
}

/// The kernel's own trace of this machine printed `... [timeout=1] bucket_expiry=4304822290
/// cpu=0 idx=18 flags=` for a process_timeout timer; perf 6.1's libtraceevent prints
/// `flags=D|P|I` for the same bytes (it misreads the masked value), the kernel is right.
#[test]
fn timer_start_flags_as_the_kernel_prints_them() {
    let start = fixture("timer/timer_start");
    let record = |flags: i64| {
        Record::new(&start)
            .int("timer", 0xffff_c900_0007_fde8u64 as i64)
            .int("expires", 4_304_822_289)
            .int("now", 4_304_822_288)
            .int("bucket_expiry", 4_304_822_290)
            .int("flags", flags)
    };
    assert_eq!(
        render(&start, &record(18 << 22)),
        "timer=0xffffc9000007fde8 function=0x0 expires=4304822289 [timeout=1] \
         bucket_expiry=4304822290 cpu=0 idx=18 flags="
    );
    let deferrable_pinned_irqsafe = (18 << 22) | 0x0038_0001;
    assert!(render(&start, &record(deferrable_pinned_irqsafe)).ends_with(" cpu=1 idx=18 flags=D|P|I"));
}
