//! The perf_event source against the real kernel (run as root, as CI does): CPU sampling
//! with callchains, tracepoints with kernel filters, lost records on a tiny ring, task
//! records, and the time-ordered drain.

use std::collections::HashSet;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use perf_event_open_sys::bindings as b;
use perfscope::sources::perf_event::{
    EventAttr, EventKind, Ordered, PerfEventError, PerfEvents, Record, RingOptions, Sampling, Target, Wakeup,
    inheriting, resolve_targets,
};
use perfscope::trace::event::EventIndex;

const TRACEFS: &str = "/sys/kernel/tracing";

/// tracefs, mounted if it is not (needs root; fails loudly otherwise).
fn tracefs() -> &'static str {
    if !std::path::Path::new(TRACEFS).join("events").exists() {
        let status = Command::new("mount")
            .args(["-t", "tracefs", "nodev", TRACEFS])
            .status()
            .unwrap();
        assert!(
            status.success(),
            "mount -t tracefs nodev {TRACEFS} failed: run the tests as root"
        );
    }
    TRACEFS
}

fn tracepoint_id(system: &str, name: &str) -> u64 {
    let path = format!("{}/events/{system}/{name}/id", tracefs());
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .trim()
        .parse()
        .unwrap()
}

/// Offset of field `name` in a tracepoint's format file (never hard-coded).
fn field_offset(system: &str, name: &str, field: &str) -> usize {
    let path = format!("{}/events/{system}/{name}/format", tracefs());
    let format = std::fs::read_to_string(&path).unwrap();
    let line = format
        .lines()
        .find(|l| {
            l.trim_start().starts_with("field:")
                && l.split(';').next().unwrap().ends_with(&format!(" {field}"))
        })
        .unwrap_or_else(|| panic!("no field {field} in {path}"));
    let offset = line
        .split(';')
        .find_map(|p| p.trim().strip_prefix("offset:"))
        .unwrap();
    offset.parse().unwrap()
}

fn busy_child() -> Child {
    Command::new("/bin/sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap()
}

/// A shell that waits for a line on stdin, then runs `script`: lets a test attach first.
fn gated_child(script: &str) -> Child {
    Command::new("/bin/sh")
        .args(["-c", &format!("read go; {script}")])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn release(child: &mut Child) {
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
}

fn kill(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Poll and drain for `time`, keeping what `keep` returns.
fn collect_for<T>(
    events: &mut PerfEvents,
    time: Duration,
    mut keep: impl FnMut(&perfscope::sources::perf_event::RecordRef<'_>) -> Option<T>,
) -> Vec<T> {
    let mut out = Vec::new();
    let end = Instant::now() + time;
    while Instant::now() < end {
        events.poll(Duration::from_millis(50)).unwrap();
        events.drain(|r| out.extend(keep(&r)));
    }
    events.drain(|r| out.extend(keep(&r)));
    out
}

fn profile(hz: u64) -> EventAttr {
    EventAttr::cpu_profile(hz).with_callchain()
}

/// `--inherit`: two watched threads opened once per CPU share one ring per CPU, and a
/// thread created after the events are open is sampled through them.
#[test]
fn inheriting_targets_share_a_ring_per_cpu_and_sample_threads_created_later() {
    // SAFETY: gettid has no preconditions.
    let me = unsafe { libc::gettid() } as u32;
    let (parked_tid, parked) = {
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let handle = std::thread::spawn(move || {
            // SAFETY: as above.
            tx.send(unsafe { libc::gettid() } as u32).unwrap();
            let _ = stop_rx.recv();
        });
        (rx.recv().unwrap(), (handle, stop_tx))
    };
    let targets = inheriting(vec![Target::Thread(me), Target::Thread(parked_tid)], None).unwrap();
    let cpus = targets.len() / 2;
    assert!(cpus >= 1 && targets.iter().all(Target::inherits));
    let mut events = PerfEvents::open(&[profile(997)], &targets, RingOptions { data_pages: 8 }).unwrap();
    assert_eq!(
        events.ring_count(),
        cpus,
        "one ring per CPU, not per thread and CPU"
    );
    events.enable().unwrap();
    let busy = std::thread::spawn(|| {
        // SAFETY: as above.
        let tid = unsafe { libc::gettid() } as u32;
        let end = Instant::now() + Duration::from_millis(700);
        let mut x = 0u64;
        while Instant::now() < end {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        tid
    });
    let samples = collect_for(&mut events, Duration::from_secs(1), |r| match r.record {
        Record::Sample(s) => s.tid,
        _ => None,
    });
    let busy_tid = busy.join().unwrap();
    drop(parked.1);
    parked.0.join().unwrap();
    let of_busy = samples.iter().filter(|&&t| t == busy_tid).count();
    assert!(
        of_busy >= 100,
        "the thread created after opening is sampled: {of_busy} of {} samples",
        samples.len()
    );
    assert!(
        samples.iter().all(|&t| t != parked_tid),
        "the parked thread sleeps"
    );
}

#[test]
fn per_thread_cpu_clock_sampling_of_a_busy_child_has_user_callchains() {
    let child = busy_child();
    let pid = child.id();
    let targets = resolve_targets(None, &[pid], &[]).unwrap();
    assert_eq!(targets, [Target::Thread(pid)]);
    let mut events = PerfEvents::open(&[profile(997)], &targets, RingOptions { data_pages: 8 }).unwrap();
    assert_eq!(
        events.event_kind(EventIndex(0)),
        Some(EventKind::CpuClock),
        "no PMU here: cpu-clock fallback"
    );
    events.enable().unwrap();
    let samples = collect_for(&mut events, Duration::from_secs(1), |r| match r.record {
        Record::Sample(s) => Some((
            s.pid,
            s.tid,
            s.callchain.frames().count(),
            s.callchain.user_ips().count(),
            r.event,
            r.trace_event().map(|t| t.callchain.len()),
        )),
        _ => None,
    });
    kill(child);
    assert!(
        samples.len() >= 100,
        "~997 Hz for 1 s of a busy loop, got {}",
        samples.len()
    );
    for &(spid, tid, frames, user, event, chain_words) in &samples {
        let chain_words = chain_words.expect("every sample converts to a TraceEvent");
        assert!(
            (frames + 1..=frames + 2).contains(&chain_words),
            "TraceEvent gets the whole chain: frames plus 1-2 context markers ({chain_words} vs {frames})"
        );
        assert_eq!((spid, tid, event), (Some(pid), Some(pid), Some(EventIndex(0))));
        assert!(frames > 0, "callchains are not empty");
        assert!(user > 0, "a user-space busy loop has user frames");
    }
    assert_eq!(events.lost_total(), 0);
}

#[test]
fn cpu_wide_sampling_finds_the_child_on_some_cpu_with_sample_id_all() {
    let targets = resolve_targets(None, &[], &[]).unwrap();
    assert!(targets.iter().all(|t| matches!(t, Target::Cpu(_))));
    let event = profile(499).with_task_records();
    let mut events = PerfEvents::open(&[event], &targets, RingOptions { data_pages: 16 }).unwrap();
    assert_eq!(events.ring_count(), targets.len());
    events.enable().unwrap();
    let child = busy_child();
    let pid = child.id();
    let seen = collect_for(&mut events, Duration::from_secs(1), |r| match r.record {
        Record::Sample(s) if s.pid == Some(pid) => {
            Some(("sample", s.cpu, s.callchain.user_ips().count(), s.time))
        }
        // sample_id_all: a COMM of the child carries its time and CPU in the trailer.
        Record::Comm(c) if c.pid == pid => Some(("comm", c.sample_id.cpu, 1, c.sample_id.time)),
        _ => None,
    });
    kill(child);
    let samples: Vec<_> = seen.iter().filter(|s| s.0 == "sample").collect();
    assert!(samples.len() >= 50, "the child was sampled: {}", samples.len());
    for s in &samples {
        assert!(
            s.1.is_some() && s.2 > 0 && s.3.is_some(),
            "cpu, user frames, time: {s:?}"
        );
    }
    let comm = seen
        .iter()
        .find(|s| s.0 == "comm")
        .expect("a COMM record of the child (exec of sh)");
    assert!(
        comm.1.is_some() && comm.3.is_some(),
        "trailer has cpu and time: {comm:?}"
    );
}

#[test]
fn sys_enter_counts_a_childs_reads_and_a_kernel_filter_keeps_only_read() {
    const N: usize = 1000;
    let enter = tracepoint_id("raw_syscalls", "sys_enter");
    let exit = tracepoint_id("raw_syscalls", "sys_exit");
    let id_offset = field_offset("raw_syscalls", "sys_enter", "id");
    let read_nr = libc::SYS_read as u64;
    let script = format!("exec dd if=/dev/zero of=/dev/null bs=1 count={N}");

    // Unfiltered, with sys_exit sharing the ring through SET_OUTPUT.
    let mut child = gated_child(&script);
    let pid = child.id();
    let targets = [Target::Thread(pid)];
    let attrs = [EventAttr::tracepoint(enter), EventAttr::tracepoint(exit)];
    // dd bs=1 makes 2 syscalls per byte, each an enter and an exit record (~120 bytes):
    // a ring that holds the whole run, so this test counts and does not lose.
    let mut events = PerfEvents::open(&attrs, &targets, RingOptions { data_pages: 512 }).unwrap();
    assert_eq!(events.ring_count(), 1, "both events write into one ring");
    events.enable().unwrap();
    release(&mut child);
    let mut seen = Vec::new();
    while child.try_wait().unwrap().is_none() {
        events.poll(Duration::from_millis(20)).unwrap();
        events.drain(|r| seen.extend(sample_of(&r, id_offset)));
    }
    events.drain(|r| seen.extend(sample_of(&r, id_offset)));
    let reads = seen
        .iter()
        .filter(|s| s.0 == Some(EventIndex(0)) && s.2 == read_nr)
        .count();
    assert!(reads >= N, "at least {N} read enters, got {reads}");
    assert!(
        seen.iter().all(|s| s.1 == Some(pid)),
        "every event is the child's"
    );
    assert!(
        seen.iter().any(|s| s.0 == Some(EventIndex(1))),
        "sys_exit events are mapped to event 1"
    );
    assert!(seen.iter().all(|s| s.3 > id_offset), "raw data holds the fields");
    assert_eq!(events.lost_total(), 0);
    drop(events);

    // Filtered in the kernel: only read() enters arrive.
    let mut child = gated_child(&script);
    let pid = child.id();
    let mut events = PerfEvents::open(
        &attrs[..1],
        &[Target::Thread(pid)],
        RingOptions { data_pages: 512 },
    )
    .unwrap();
    let err = events.set_filter(EventIndex(0), "id == ").unwrap_err();
    assert!(matches!(err, PerfEventError::FilterRefused { .. }), "{err}");
    assert!(err.to_string().contains("filter in user space"), "{err}");
    // A refused filter leaves none behind: a valid one can still be set (once).
    events
        .set_filter(EventIndex(0), &format!("id == {read_nr}"))
        .unwrap();
    events.enable().unwrap();
    release(&mut child);
    let mut seen = Vec::new();
    while child.try_wait().unwrap().is_none() {
        events.poll(Duration::from_millis(20)).unwrap();
        events.drain(|r| seen.extend(sample_of(&r, id_offset)));
    }
    events.drain(|r| seen.extend(sample_of(&r, id_offset)));
    assert!(seen.len() >= N, "{} filtered events", seen.len());
    assert!(
        seen.iter().all(|s| s.2 == read_nr),
        "the kernel filter let only read() through"
    );
}

/// (event, pid, syscall id, raw length) of a sample.
fn sample_of(
    r: &perfscope::sources::perf_event::RecordRef<'_>,
    id_offset: usize,
) -> Option<(Option<EventIndex>, Option<u32>, u64, usize)> {
    let Record::Sample(s) = r.record else { return None };
    let id = s
        .raw
        .get(id_offset..id_offset + 8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))?;
    Some((r.event, s.pid, id, s.raw.len()))
}

#[test]
fn a_per_thread_session_ends_when_its_threads_exit_and_self_samples_are_recognised() {
    let mut child = gated_child("exit 0");
    let event = EventAttr::new(EventKind::TaskClock, Sampling::FrequencyHz(999))
        .with_wakeup(Wakeup::WatermarkPercent(0));
    // This test's thread (not the main thread: the harness runs tests on their own).
    // SAFETY: gettid has no preconditions.
    let me = unsafe { libc::gettid() } as u32;
    let targets = [Target::Thread(child.id()), Target::Thread(me)];
    let mut events = PerfEvents::open(&[event], &targets, RingOptions { data_pages: 1 }).unwrap();
    events.enable().unwrap();
    release(&mut child);
    child.wait().unwrap();
    let outcome = events.poll(Duration::from_secs(2)).unwrap();
    assert!(
        outcome.hung_up >= 1 && !outcome.all_hung_up,
        "the child's ring hung up, ours did not: {outcome:?}"
    );
    // Burn some of our own CPU so task-clock samples this thread.
    let start = Instant::now();
    let mut x = 0u64;
    while start.elapsed() < Duration::from_millis(100) {
        x = x.wrapping_mul(31).wrapping_add(1);
    }
    std::hint::black_box(x);
    let mut own = 0;
    events.drain(|r| own += usize::from(r.is_sample_of(events_own_pid())));
    assert!(
        own > 10,
        "samples of this process are recognised for --exclude-self: {own}"
    );
}

fn events_own_pid() -> u32 {
    perfscope::sources::perf_event::own_pid()
}

#[test]
fn a_one_page_ring_under_a_syscall_storm_counts_lost_records() {
    let enter = tracepoint_id("raw_syscalls", "sys_enter");
    let mut child = gated_child("exec dd if=/dev/zero of=/dev/null bs=1 count=200000");
    let attr = EventAttr::tracepoint(enter).with_wakeup(Wakeup::WatermarkPercent(50));
    let mut events = PerfEvents::open(
        &[attr],
        &[Target::Thread(child.id())],
        RingOptions { data_pages: 1 },
    )
    .unwrap();
    events.enable().unwrap();
    release(&mut child);
    // Reading only every 20 ms while the storm runs: the single page fills and the kernel
    // drops; it writes the LOST record once the reader has made room.
    let (mut lost_records, mut samples, mut drains) = (0u64, 0u64, 0);
    let mut drain = |events: &mut PerfEvents| {
        events.drain(|r| match r.record {
            Record::Lost { count, .. } => lost_records += count,
            Record::Sample(_) => samples += 1,
            _ => {}
        })
    };
    while child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(20));
        drain(&mut events);
        drains += 1;
    }
    drain(&mut events);
    assert!(
        lost_records > 100_000,
        "400000 syscalls into one page lose most: {lost_records}"
    );
    assert!(
        samples > 0 && samples < 100 * (drains + 1),
        "a page holds a few dozen records: {samples}"
    );
    let counters = events.counters();
    assert_eq!(
        counters[0].lost, lost_records,
        "the ring counter matches the LOST records"
    );
    // The kernel's own counter (PERF_FORMAT_LOST) also holds the last burst, lost after
    // the last LOST record was written: never less, and never more than was produced.
    let exact = events.lost_total();
    assert!(exact >= lost_records, "{exact} < {lost_records}");
    assert!(
        exact + samples <= 401_000,
        "lost {exact} + read {samples} exceed the ~400,000 syscalls dd made"
    );
    assert!(counters[0].ring.records_read > samples);
}

#[test]
fn task_records_describe_a_child_spawned_while_sampling() {
    let targets = resolve_targets(None, &[], &[]).unwrap();
    let event = EventAttr::new(EventKind::CpuClock, Sampling::FrequencyHz(99)).with_task_records();
    let mut events = PerfEvents::open(&[event], &targets, RingOptions { data_pages: 16 }).unwrap();
    events.enable().unwrap();
    let mut child = Command::new("/bin/sh")
        .args(["-c", "exec /bin/true"])
        .spawn()
        .unwrap();
    let pid = child.id();
    child.wait().unwrap();
    let mut kinds = HashSet::new();
    let mut mapped = Vec::new();
    let end = Instant::now() + Duration::from_millis(300);
    while Instant::now() < end {
        events.poll(Duration::from_millis(50)).unwrap();
        events.drain(|r| match r.record {
            Record::Fork(t) if t.pid == pid && t.tid == pid => {
                kinds.insert("fork");
            }
            Record::Comm(c) if c.pid == pid && c.exec && c.comm == b"true" => {
                kinds.insert("comm-exec");
            }
            Record::Mmap2(m) if m.pid == pid => {
                kinds.insert("mmap2");
                mapped.push(String::from_utf8_lossy(m.filename).into_owned());
            }
            Record::Exit(t) if t.pid == pid => {
                kinds.insert("exit");
            }
            _ => {}
        });
    }
    for kind in ["fork", "comm-exec", "mmap2", "exit"] {
        assert!(kinds.contains(kind), "{kind} record of the child: saw {kinds:?}");
    }
    assert!(
        mapped.iter().any(|f| f.ends_with("/true")),
        "the exec'd binary is mapped: {mapped:?}"
    );
}

#[test]
fn the_ordered_drain_across_cpus_is_time_sorted_and_complete() {
    let switch = tracepoint_id("sched", "sched_switch");
    let targets = resolve_targets(None, &[], &[]).unwrap();
    let attr = EventAttr::tracepoint(switch).with_wakeup(Wakeup::WatermarkPercent(0));
    let mut events = PerfEvents::open(&[attr], &targets, RingOptions { data_pages: 64 }).unwrap();
    events.enable().unwrap();
    let child = gated_child("i=0; while [ $i -lt 300 ]; do sleep 0.001; i=$((i+1)); done");
    let mut child = child;
    release(&mut child);
    let (mut times, mut cpus, mut losses) = (Vec::new(), HashSet::new(), 0);
    let mut take = |item: Ordered<'_>| match item {
        Ordered::Record(r) => {
            if let Record::Sample(s) = r.record {
                times.push(s.time.unwrap());
                cpus.insert(s.cpu.unwrap());
            }
        }
        Ordered::Event(e) => {
            times.push(e.time_ns);
            cpus.insert(e.cpu);
        }
        Ordered::Lost(_) => losses += 1,
    };
    let end = Instant::now() + Duration::from_millis(600);
    while Instant::now() < end {
        events.poll(Duration::from_millis(30)).unwrap();
        events.drain_ordered(&mut take);
    }
    kill(child);
    events.drain_ordered(&mut take);
    events.flush_ordered(&mut take);
    let read: u64 = events.counters().iter().map(|c| c.ring.records_read).sum();
    assert!(
        times.len() > 300,
        "a sleeping loop switches at least once per sleep: {}",
        times.len()
    );
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "released in time order");
    assert_eq!(
        times.len() as u64 + losses,
        read,
        "every record read was released once"
    );
    if targets.len() > 1 {
        assert!(cpus.len() > 1, "switches on several CPUs were merged: {cpus:?}");
    }
    let _ = b::PERF_RECORD_SAMPLE;
}
