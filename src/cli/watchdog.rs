//! `watchdog`'s command line: what it finds of the kernel's lockup detector before it
//! starts (threshold, watched CPUs, the watchdog timer's function) and the events that
//! watch it, as perf-prof's watchdog opens them.

use anyhow::{Context, bail};
use clap::Args;

use super::host::{HostArgs, TraceArgs};
use super::tui::TuiArgs;
use crate::analyzers::options::{AnalyzerKind, TraceOptions};
use crate::analyzers::watchdog::WatchdogParams;
use crate::sources::perf_event::targets::{online_cpus, parse_cpu_list};

#[derive(Args)]
pub struct WatchdogCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// How often each CPU is checked for a hard lockup (perf-prof: the NMI's frequency).
    #[arg(short = 'F', long = "freq", value_name = "HZ", default_value_t = 1)]
    pub freq: u64,
    /// Print the kernel stack of the tick that predicts a hard lockup (and make those
    /// stacks the Flamegraph).
    #[arg(short = 'g', long = "call-graph")]
    pub call_graph: bool,
    #[command(flatten)]
    pub tui: TuiArgs,
}

/// Said on stdout when there is no hardware PMU (perf-prof falls back silently).
pub const NO_PMU_NOTICE: &str = "watchdog: no hardware PMU here: hard lockups are checked on cpu-clock \
ticks, an hrtimer that interrupts-off stops too, not on NMIs";

fn read_proc(path: &str) -> anyhow::Result<String> {
    crate::input::read_text(std::path::Path::new(path), crate::input::InputKind::System)
        .map(|s| s.trim().to_string())
        .with_context(|| format!("watchdog: cannot read {path} (a kernel without the lockup detector?)"))
}

/// `watchdog_timer_fn`'s address in /proc/kallsyms, read line by line within its caps.
fn watchdog_timer_fn() -> anyhow::Result<u64> {
    let path = std::path::Path::new("/proc/kallsyms");
    let file = crate::input::InputFile::open(path).context("watchdog: cannot read /proc/kallsyms")?;
    let mut lines = crate::input::BoundedLines::new(file, path, crate::input::InputKind::Kallsyms);
    let mut found = None;
    while let Some(line) = lines
        .next_line()
        .context("watchdog: cannot read /proc/kallsyms")?
    {
        let line = String::from_utf8_lossy(line);
        let mut words = line.split_whitespace();
        if let (Some(address), Some(_kind), Some("watchdog_timer_fn")) =
            (words.next(), words.next(), words.next())
        {
            found = u64::from_str_radix(address, 16).ok();
            break;
        }
    }
    let address = found.context(
        "watchdog: no watchdog_timer_fn in /proc/kallsyms (a kernel without the soft-lockup detector)",
    )?;
    if address == 0 {
        bail!("watchdog: /proc/kallsyms hides addresses: run as root (or `sysctl kernel.kptr_restrict=0`)");
    }
    Ok(address)
}

/// Whether perf has a hardware PMU (the `cpu` event source).
pub fn has_hardware_pmu() -> bool {
    std::path::Path::new("/sys/bus/event_source/devices/cpu").exists()
        || std::path::Path::new("/sys/bus/event_source/devices/cpu_core").exists()
}

impl WatchdogCommandArgs {
    /// The session's options, and the host arguments with -C narrowed to the CPUs the
    /// kernel's watchdog watches (perf-prof: `-C` ∩ watchdog_cpumask).
    pub fn options(&self) -> anyhow::Result<(HostArgs, TraceOptions)> {
        let mut host = self.host.clone();
        if host.pids.is_some() || host.tids.is_some() || !host.workload.is_empty() {
            crate::usage!("watchdog watches CPUs (-C), not processes (-p, -t, a workload)");
        }
        if !self.trace.events.is_empty() {
            crate::usage!("watchdog opens its own events: drop -e");
        }
        if self.freq == 0 {
            crate::usage!("watchdog: -F must be at least 1");
        }
        let thresh_s: u64 = read_proc("/proc/sys/kernel/watchdog_thresh")?
            .parse()
            .context("watchdog: /proc/sys/kernel/watchdog_thresh is not a number")?;
        if thresh_s == 0 {
            bail!("watchdog: the kernel's lockup detector is off (kernel.watchdog_thresh = 0)");
        }
        let chosen = match &host.cpus {
            Some(list) => parse_cpu_list(list).map_err(|e| anyhow::anyhow!("-C {list}: {e}"))?,
            None => online_cpus()?,
        };
        let watched_by_kernel = match read_proc("/proc/sys/kernel/watchdog_cpumask") {
            Ok(mask) => parse_cpu_list(&mask).map_err(|e| anyhow::anyhow!("watchdog_cpumask {mask}: {e}"))?,
            Err(_) => chosen.clone(),
        };
        let cpus: Vec<u32> = chosen
            .into_iter()
            .filter(|c| watched_by_kernel.contains(c))
            .collect();
        if cpus.is_empty() {
            bail!("watchdog: none of the chosen CPUs is in /proc/sys/kernel/watchdog_cpumask");
        }
        host.cpus = Some(cpus.iter().map(u32::to_string).collect::<Vec<_>>().join(","));
        let timer_fn = watchdog_timer_fn()?;
        let mut trace = self.trace.options(AnalyzerKind::Watchdog);
        let function = format!("function==0x{timer_fn:x}");
        trace.events = vec![
            format!("timer:hrtimer_expire_entry/{function}/"),
            format!("timer:hrtimer_start/{function}/"),
            "timer:hrtimer_cancel".into(),
            // Since 4.19 the soft-lockup watchdog runs on the CPU stopper, migration/N.
            "sched:sched_switch/next_comm~\"migration/*\"/".into(),
            "software:cpu-clock".into(),
        ];
        trace.period_ns = Some(1_000_000_000 / self.freq);
        trace.call_graph = self.call_graph;
        // perf-prof prints a warning as it happens; a tenth of a second is as close as a
        // per-interval printer gets without a print per event.
        trace.interval = trace.interval.or(Some(std::time::Duration::from_millis(100)));
        trace.watchdog = Some(WatchdogParams {
            thresh_s,
            timer_fn,
            cpus,
        });
        Ok((host, trace))
    }
}
