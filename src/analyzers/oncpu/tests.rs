use super::*;
use crate::analyzers::test_events::{Value, event, record, sched_switch};

const MS: u64 = 1_000_000;

/// (CPU, total ms, its tasks as (tid, ms, runs)).
type CpuSummary = (u32, u64, Vec<(u32, u64, u64)>);

/// (tid, total ms, its CPUs as (cpu, ms)).
type ThreadSummary = (u32, u64, Vec<(u32, u64)>);

fn switch(a: &mut OnCpuAnalyzer, at_ms: u64, cpu: u32, prev: i64, next: i64) {
    let raw = record(
        &sched_switch(),
        prev as u32,
        &[("prev_pid", Value::Int(prev)), ("next_pid", Value::Int(next))],
    );
    a.feed(&event(0, at_ms * MS, cpu, prev as u32, &raw));
}

#[test]
fn runs_between_switches_add_up_per_cpu_and_task_longest_first() {
    let mut a = OnCpuAnalyzer::new(&[sched_switch()], OnCpuSchema::default()).unwrap();
    switch(&mut a, 0, 1, 0, 7); // CPU 1's clock starts
    switch(&mut a, 30, 1, 7, 8); // 7 ran 30 ms
    switch(&mut a, 35, 1, 8, 0); // 8 ran 5 ms
    switch(&mut a, 40, 1, 0, 7); // idle: not a task
    switch(&mut a, 60, 1, 7, 0); // 7 again, 20 ms
    switch(&mut a, 10, 0, 9, 0); // CPU 0's first switch: 9's run has no start
    switch(&mut a, 12, 0, 0, 9);
    a.lost(13 * MS, 14 * MS);
    switch(&mut a, 20, 0, 9, 0); // its start was before the loss
    let rows = a.take_rows();
    let table = a.tabulate(&rows);
    let summary: Vec<CpuSummary> = table
        .rows
        .iter()
        .map(|r| {
            (
                r.cpu,
                r.total_ns / MS,
                r.tasks
                    .iter()
                    .map(|t| (t.tid.unwrap(), t.stats.total_ns() / MS, t.stats.calls()))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(summary, [(1, 55, vec![(7, 50, 2), (8, 5, 1)])]);
}

/// The window's edges: the first switch on a CPU ends a run that began when the events
/// were on, and at the end each CPU's running task is credited up to the session's end.
#[test]
fn runs_at_the_edges_of_the_window_count_from_its_start_and_to_its_end() {
    let mut a = OnCpuAnalyzer::new(&[sched_switch()], OnCpuSchema::default()).unwrap();
    a.begin(0);
    switch(&mut a, 900, 0, 9, 7); // 9 spun on CPU 0 from the start: 900 ms
    switch(&mut a, 950, 0, 7, 9); // 7 ran 50 ms, 9 again until the end
    switch(&mut a, 100, 1, 0, 8); // CPU 1 idled (not a task), then 8 runs to the end
    switch(&mut a, 1000, 1, 8, 0); // 8 ran 900 ms; idle to the end is no task's
    a.finish(1000 * MS); // 9 ran 50 ms more
    let rows = a.take_rows();
    let table = a.tabulate(&rows);
    let summary: Vec<(u32, Vec<(u32, u64)>)> = table
        .rows
        .iter()
        .map(|r| {
            (
                r.cpu,
                r.tasks
                    .iter()
                    .map(|t| (t.tid.unwrap(), t.stats.total_ns() / MS))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(summary, [(0, vec![(9, 950), (7, 50)]), (1, vec![(8, 900)])]);
}

/// Thread mode (`-p`): only the chosen threads' runs count, and the table has a row per
/// thread with its time on each CPU, as perf-prof's `THREAD COMM SUM(ms) CPUS(ms)`.
#[test]
fn thread_mode_keeps_the_chosen_threads_and_lists_their_cpus() {
    let schema = OnCpuSchema {
        threads: true,
        ..OnCpuSchema::default()
    };
    let mut a = OnCpuAnalyzer::new(&[sched_switch()], schema)
        .unwrap()
        .keeping(TaskFilter {
            tids: [7, 9].into_iter().collect(),
            ..TaskFilter::default()
        });
    switch(&mut a, 0, 1, 0, 7);
    switch(&mut a, 30, 1, 7, 8); // 7 ran 30 ms on CPU 1
    switch(&mut a, 35, 1, 8, 9); // 8 is not chosen
    switch(&mut a, 47, 1, 9, 0); // 9 ran 12 ms on CPU 1
    switch(&mut a, 0, 0, 0, 7);
    switch(&mut a, 4, 0, 7, 0); // 7 ran 4 ms on CPU 0
    let rows = a.take_rows();
    let table = a.tabulate(&rows);
    let threads: Vec<ThreadSummary> = table
        .threads
        .unwrap()
        .iter()
        .map(|t| {
            (
                t.tid,
                t.total_ns / MS,
                t.cpus.iter().map(|(c, ns)| (*c, ns / MS)).collect(),
            )
        })
        .collect();
    assert_eq!(threads, [(7, 34, vec![(0, 4), (1, 30)]), (9, 12, vec![(1, 12)])]);
    assert!(
        table
            .rows
            .iter()
            .all(|r| r.tasks.iter().all(|t| t.tid != Some(8)))
    );
}

/// The session's end is when the events began to be disabled, not the latest event: a
/// CPU disabled later delivers switches after it, and a task that left an earlier one
/// unseen would run on both.
#[test]
fn the_end_credits_running_tasks_up_to_the_sessions_end_not_to_a_later_cpus_events() {
    let mut a = OnCpuAnalyzer::new(&[sched_switch()], OnCpuSchema::default()).unwrap();
    a.begin(0);
    switch(&mut a, 990, 0, 8, 9); // 9 runs on CPU 0 from 990 ms; CPU 0 is disabled at 1000
    switch(&mut a, 1040, 1, 7, 9); // CPU 1, disabled 50 ms later: 9 came over
    a.finish(1000 * MS);
    let rows = a.take_rows();
    let table = a.tabulate(&rows);
    let nine: Vec<(u32, u64)> = table
        .rows
        .iter()
        .flat_map(|r| {
            r.tasks
                .iter()
                .filter(|t| t.tid == Some(9))
                .map(|t| (r.cpu, t.stats.total_ns() / MS))
        })
        .collect();
    // 10 ms on CPU 0 (to the end), none on CPU 1 (it came after the end).
    assert_eq!(nine, [(0, 10)]);
}
