//! perf-prof's hrtimer lines: per kept period, the timer's line
//! `<prefix>    pid %6d tid %6d [%03d] %llu.%06llu: hrtimer: cpu-clock %lu ns` (the prefix
//! is the wall clock of the tick, the `sec.usec` its event time) and one `    name count`
//! line per `-e` event, then with `-g` the timer's kernel stack, a frame per line
//! (`    %016x name+0xoff (module)`). Nothing else: no header, no per-interval line.

use std::fmt::Write;

use super::WallClock;
use super::kmem_report::stack_text;
use crate::model::timer_samples::{MAX_SAMPLES, TimerSamples, TimerSchema};

/// The lines of `samples`; `wall_of` gives the wall clock of an event time.
pub fn hrtimer_lines(
    schema: &TimerSchema,
    samples: &TimerSamples,
    wall_of: &dyn Fn(u64) -> WallClock,
) -> String {
    let mut out = String::new();
    for s in &samples.matched {
        let _ = writeln!(
            out,
            "{}    pid {:6} tid {:6} [{:03}] {}.{:06}: hrtimer: cpu-clock {} ns",
            wall_of(s.time_ns).prefix(),
            s.pid,
            s.tid,
            s.cpu,
            s.time_ns / 1_000_000_000,
            s.time_ns % 1_000_000_000 / 1_000,
            s.period_ns
        );
        for (name, n) in schema.events.iter().zip(&s.counts) {
            let _ = writeln!(out, "    {name} {n}");
        }
        if let Some(stack) = &s.stack {
            out.push_str(&stack_text(stack));
        }
    }
    if samples.dropped > 0 {
        // perfscope keeps a bounded list (perf-prof prints as it goes and keeps none).
        let _ = writeln!(
            out,
            "hrtimer: {} more periods met the condition (over {MAX_SAMPLES} kept)",
            samples.dropped
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::memory_stacks::{FrameText, NamedStack};
    use crate::model::timer_samples::TimerSample;

    #[test]
    fn each_kept_period_prints_the_timer_line_one_line_per_event_and_its_stack() {
        let schema = TimerSchema {
            events: vec!["sched_switch".into(), "wakeup".into()],
            condition: Some("sched_switch==0".into()),
            period_ns: 10_000_000,
        };
        let samples = TimerSamples {
            matched: vec![TimerSample {
                time_ns: 2_772_097_294_123,
                cpu: 1,
                pid: 21183,
                tid: 21184,
                period_ns: 10_000_417,
                counts: vec![0, 3],
                stack: Some(std::sync::Arc::new(NamedStack {
                    id: 1,
                    frames: vec![
                        FrameText {
                            address: 0xffffffff81d755f0,
                            text: "urandom_read_iter+0x40 ([kernel.kallsyms])".into(),
                        },
                        FrameText {
                            address: 0xffffffff81a00100,
                            text: "vfs_read+0x1a ([kernel.kallsyms])".into(),
                        },
                    ],
                })),
            }],
            periods: 5,
            dropped: 0,
        };
        let wall = WallClock {
            year: 2026,
            month: 12,
            day: 2,
            hour: 15,
            minute: 51,
            second: 5,
            microsecond: 277_053,
        };
        assert_eq!(
            hrtimer_lines(&schema, &samples, &|_| wall),
            "2026-12-02 15:51:05.277053     pid  21183 tid  21184 [001] 2772.097294: hrtimer: cpu-clock 10000417 ns\n\
             \x20   sched_switch 0\n\
             \x20   wakeup 3\n\
             \x20   ffffffff81d755f0 urandom_read_iter+0x40 ([kernel.kallsyms])\n\
             \x20   ffffffff81a00100 vfs_read+0x1a ([kernel.kallsyms])\n"
        );
    }
}
