//! `--no-tui` for the tracepoint analyzers: perf-prof's text on stdout — the table of each
//! `-i` interval (or one table at the end), `--than` offenders as raw event lines before it
//! — lost-event notes on stderr once per interval, and a closing summary line on stderr
//! that scripts (and scripts/bench-syscalls-lost.sh) read.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use crate::analyzers::text::WallClock;
use crate::live::host::options::{HostRunOptions, TraceOptions};
use crate::live::host::trace_session::TraceSession;

use super::session::stop_on_signals;

/// How long one wait for ring data lasts at most.
const POLL: Duration = Duration::from_millis(100);

/// Run the analyzer until the duration, the workload's exit or a signal; print as it goes.
pub fn run_trace(run: &HostRunOptions, trace: &TraceOptions) -> anyhow::Result<()> {
    let stop = stop_on_signals()?;
    let mut session = TraceSession::open(run, trace)?;
    let started = Instant::now();
    let deadline = run.duration.map(|d| started + d);
    let mut next_print = trace.interval.map(|i| started + i);
    let mut reported_lost = 0u64;
    let mut out = std::io::stdout();
    let name = trace.analyzer.name();
    loop {
        if stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let wait = [deadline, next_print]
            .into_iter()
            .flatten()
            .map(|t| t.saturating_duration_since(Instant::now()))
            .fold(POLL, Duration::min);
        if !session.pump(wait)? {
            break;
        }
        if let (Some(at), Some(interval)) = (next_print, trace.interval)
            && Instant::now() >= at
        {
            let text = session.interval_text();
            out.write_all(text.as_bytes())?;
            out.flush()?;
            let lost = session.counters.lost;
            if lost > reported_lost {
                eprintln!(
                    "{}{name}: lost {} events ({lost} total)",
                    WallClock::local(SystemTime::now()).prefix(),
                    lost - reported_lost
                );
                reported_lost = lost;
            }
            next_print = Some(at + interval);
        }
    }
    session.finish();
    // perf-prof prints the last (partial) interval at exit too.
    out.write_all(session.interval_text().as_bytes())?;
    out.flush()?;
    let c = session.counters;
    eprintln!(
        "perfscope {name}: read {} events, lost {} events in {:.2} s{}",
        c.events,
        c.lost,
        started.elapsed().as_secs_f64(),
        if c.filtered > 0 {
            format!(" ({} dropped by user-space filters)", c.filtered)
        } else {
            String::new()
        }
    );
    Ok(())
}
