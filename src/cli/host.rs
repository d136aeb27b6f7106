//! The host subcommands' flags, spelled as perf-prof spells them (`-C`, `-p`, `-t`, `-m`,
//! `--watermark`, `-e`, `-k`, `-i`, `--perins`, `--than`, `-F`, `-g`) so people's command
//! lines carry over.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::analyzers::options::{AnalyzerKind, TraceOptions};
use crate::feeds::host::options::{CallGraph, HostRunOptions, HostTarget, RingOptions, SamplingOptions};
use crate::sources::perf_event::user_stack::{DEFAULT_STACK_BYTES, parse_stack_bytes};

use super::units::{parse_duration_ns, parse_positive_seconds};
use crate::symbols::host::RootFrame;

// Where and how events are collected; shared by every host subcommand. (The argument
// structs' own comments are plain ones: a doc comment would become the about text of
// every subcommand that flattens the struct, its arguments being built deferred.)
#[derive(Args, Clone, Debug)]
pub struct HostArgs {
    /// CPUs to watch: `N`, `A-B`, `A-B,C` (default: all online).
    #[arg(short = 'C', long = "cpus", value_name = "LIST")]
    pub cpus: Option<String>,
    /// Watch every thread of these processes instead of CPUs.
    #[arg(short = 'p', long = "pids", value_name = "PID,...", conflicts_with = "cpus")]
    pub pids: Option<String>,
    /// Watch these threads instead of CPUs.
    #[arg(short = 't', long = "tids", value_name = "TID,...", conflicts_with_all = ["cpus", "pids"])]
    pub tids: Option<String>,
    /// Also watch the tasks the watched threads (-p/-t) create from now on: each thread is
    /// opened once per CPU, as perf-prof's --inherit. A workload's children are followed
    /// without it (as perf does).
    #[arg(long)]
    pub inherit: bool,
    /// Watch only the workload's own process, not the tasks it creates.
    #[arg(long, conflicts_with = "inherit")]
    pub no_inherit: bool,
    /// Ring buffer data pages per buffer (a power of two; default per analyzer).
    #[arg(short = 'm', long = "mmap-pages", value_name = "N")]
    pub mmap_pages: Option<usize>,
    /// Wake the reader when a ring is this full, percent (0 = every event).
    #[arg(long, value_name = "0-100", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub watermark: Option<u8>,
    /// Read the rings from a real-time (SCHED_FIFO) thread: woken by the kernel it runs at
    /// once, ahead of the traced workload, and loses far fewer events under a flood — at
    /// the cost of preempting the workload on its CPU while it drains (as perf record -r).
    #[arg(long)]
    pub realtime: bool,
    /// Record samples, events and symbols into this SQLite session as they arrive.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Let --record replace an existing session file (without it an existing file is refused).
    #[arg(long, requires = "record")]
    pub force: bool,
    /// Stop after this many seconds (at most 4611686018, 146 years).
    #[arg(long, value_name = "S", value_parser = parse_positive_seconds, allow_negative_numbers = true)]
    pub duration: Option<Duration>,
    /// Exit after COUNT events (samples, or tracepoint events that pass their filters):
    /// perf-prof's `-N`/`--exit-N`.
    #[arg(short = 'N', long = "exit-N", value_name = "COUNT", value_parser = clap::value_parser!(u64).range(1..))]
    pub exit_n: Option<u64>,
    /// Batch mode: no terminal UI, text output on stdout (the default when stdout is not a
    /// terminal, as perf-prof).
    #[arg(long)]
    pub no_tui: bool,
    /// Append the text output (and errors) to FILE instead of the terminal, as perf-prof's
    /// `-o`: implies the text output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Where the artifact set goes: <DIR>/perf/<arch>/latest/ (default perfscope-out). The
    /// export key and `top --no-tui` write there; a text run of an analyzer or of
    /// `profile` writes the artifact set too when --out is given.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// A command to start and watch (after `--`); perfscope stops when it exits.
    #[arg(last = true, value_name = "WORKLOAD")]
    pub workload: Vec<String>,
}

/// `-m`'s largest ring: 2^20 pages (4 GiB of a CPU's memory) — beyond it a size is a typo.
pub const MAX_RING_PAGES: usize = 1 << 20;

/// Where artifacts go when `--out` is not given.
pub const DEFAULT_OUT: &str = "perfscope-out";

impl HostArgs {
    /// perf-prof's discipline: text when asked (`--no-tui`, `-o FILE`) or when stdout is
    /// not a terminal (a pipe, a file); the TUI only on a terminal.
    pub fn text_output(&self) -> bool {
        use std::io::IsTerminal;
        self.no_tui || self.output.is_some() || !std::io::stdout().is_terminal()
    }

    pub fn run_options(&self) -> Result<HostRunOptions, String> {
        if let Some(pages) = self.mmap_pages
            && (!pages.is_power_of_two() || pages > MAX_RING_PAGES)
        {
            return Err(format!(
                "-m {pages}: ring buffer pages must be a power of two from 1 to {MAX_RING_PAGES} \
                 (1, 2, 4, … 64, 128)"
            ));
        }
        // The lists the user typed, checked now (not when the events open): a bad one is a
        // usage error, and a process that is not there is said by its pid.
        use crate::sources::perf_event::targets::{parse_cpu_list, parse_id_list};
        if let Some(cpus) = &self.cpus {
            parse_cpu_list(cpus).map_err(|e| format!("-C {cpus}: {e}"))?;
        }
        for (flag, list) in [("-p", &self.pids), ("-t", &self.tids)] {
            let Some(list) = list else { continue };
            for id in parse_id_list(list).map_err(|e| format!("{flag} {list}: {e}"))? {
                let path = if flag == "-p" {
                    format!("/proc/{id}")
                } else {
                    format!("/proc/{id}/task/{id}")
                };
                if !std::path::Path::new(&path).exists() {
                    let what = if flag == "-p" { "process" } else { "thread" };
                    return Err(format!("{flag} {list}: no such {what}: {id}"));
                }
            }
        }
        Ok(HostRunOptions {
            target: HostTarget {
                cpus: self.cpus.clone(),
                pids: self.pids.clone(),
                tids: self.tids.clone(),
                // `perfscope top -- timeout 3 ./busy` profiles ./busy, not only timeout.
                inherit: self.inherit || (!self.workload.is_empty() && !self.no_inherit),
                workload: self.workload.clone(),
            },
            ring: RingOptions {
                pages: self.mmap_pages,
                watermark_percent: self.watermark,
                realtime: self.realtime,
            },
            record: self.record.clone(),
            duration: self.duration,
            out: self.out.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_OUT)),
            exit_after: self.exit_n,
        })
    }
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum RootArg {
    None,
    Comm,
    Pid,
    CommPid,
}

// CPU sampling flags (`top` without `-e`, `profile`).
#[derive(Args, Clone, Debug)]
pub struct SamplingArgs {
    /// Samples per second per CPU.
    #[arg(short = 'F', long = "freq", value_name = "HZ", default_value_t = 997)]
    pub freq: u64,
    /// Sample kernel + user call chains (the default for top; `-g` alone, as perf-prof
    /// takes it, is `fp`), the user part as perf finds it: `fp` walks frame pointers;
    /// `dwarf[,SIZE]` copies SIZE bytes of user stack per sample (default 8192, a multiple
    /// of 8 up to 65528) and unwinds them with the programs' .eh_frame, for programs built
    /// without frame pointers (larger rings, more bytes per sample).
    #[arg(
        short = 'g',
        long = "call-graph",
        value_name = "fp|dwarf[,SIZE]",
        num_args = 0..=1,
        default_missing_value = "fp",
        value_parser = parse_call_graph
    )]
    pub call_graph: Option<CallGraph>,
    /// Sample only the interrupted address, no call chain.
    #[arg(long, conflicts_with = "call_graph")]
    pub no_call_graph: bool,
    /// Only user space (perf-prof: `--exclude-kernel`).
    #[arg(long, visible_alias = "exclude-kernel", conflicts_with = "kernel_only")]
    pub user_only: bool,
    /// Only the kernel (perf-prof: `--exclude-user`).
    #[arg(long, visible_alias = "exclude-user")]
    pub kernel_only: bool,
    /// Leave perfscope's own samples out.
    #[arg(long)]
    pub exclude_self: bool,
    /// Name user-space frames from DWARF too: inlined calls as frames of their own, source
    /// lines. Off, names come from symbol tables (as perf-prof's): DWARF costs memory in
    /// proportion to the debug info of every sampled binary (tens of MB for libc's).
    #[arg(long)]
    pub inline: bool,
    /// The frame above each stack: the command name, the pid, both, or none.
    #[arg(long, value_enum, default_value_t = RootArg::Comm, ignore_case = true)]
    pub root: RootArg,
}

impl SamplingArgs {
    pub fn options(&self) -> Result<SamplingOptions, String> {
        if self.freq == 0 {
            return Err("-F must be at least 1 Hz".into());
        }
        let call_graph = self.call_graph.unwrap_or_default();
        if call_graph != CallGraph::FramePointer && self.kernel_only {
            return Err(
                "--call-graph dwarf unwinds user-space stacks: drop --kernel-only (--exclude-user), or use --call-graph fp"
                    .into(),
            );
        }
        Ok(SamplingOptions {
            freq_hz: self.freq,
            callchain: !self.no_call_graph,
            call_graph,
            user_only: self.user_only,
            kernel_only: self.kernel_only,
            exclude_self: self.exclude_self,
            inline_frames: self.inline,
            root: match self.root {
                RootArg::None => RootFrame::None,
                RootArg::Comm => RootFrame::Comm,
                RootArg::Pid => RootFrame::Pid,
                RootArg::CommPid => RootFrame::CommPid,
            },
            sample_lines: false,
        })
    }
}

/// `--call-graph fp|dwarf[,SIZE]`, perf's spelling.
pub fn parse_call_graph(text: &str) -> Result<CallGraph, String> {
    let (mode, size) = match text.split_once(',') {
        Some((mode, size)) => (mode, Some(size)),
        None => (text, None),
    };
    match (mode.trim(), size) {
        ("fp", None) => Ok(CallGraph::FramePointer),
        ("fp", Some(_)) => Err("fp takes no size: --call-graph fp, or --call-graph dwarf,SIZE".into()),
        ("dwarf", None) => Ok(CallGraph::Dwarf {
            stack_bytes: DEFAULT_STACK_BYTES,
        }),
        ("dwarf", Some(size)) => Ok(CallGraph::Dwarf {
            stack_bytes: parse_stack_bytes(size)?,
        }),
        ("lbr", _) => Err("lbr needs a hardware PMU perfscope does not drive: use fp or dwarf[,SIZE]".into()),
        (other, _) => Err(format!(
            "unknown call graph mode '{other}': use fp (frame pointers) or dwarf[,SIZE] (stack copies, SIZE default {DEFAULT_STACK_BYTES})"
        )),
    }
}

// The flags every tracepoint analyzer takes. The ones only some analyzers use (`-k`,
// `--perins`, `--than`) are their own structs below: a subcommand flattens those its
// analyzer uses, so the parser offers no other (perf-prof's per-profiler option lists)
// and a flag outside them is an argument error, not a flag silently ignored.
#[derive(Args, Clone, Debug)]
pub struct TraceArgs {
    /// Event selectors `sys:name[/filter/attr/.../]`, comma-separated; repeat `-e` for
    /// each stage (multi-trace: events of one `-e` pair with those of the next).
    #[arg(short = 'e', long = "event", value_name = "EVENT,...")]
    pub events: Vec<String>,
    /// Print (and reset) the table every MS milliseconds in --no-tui mode.
    #[arg(short = 'i', long = "interval", value_name = "MS")]
    pub interval: Option<u64>,
    /// Accepted for perf-prof command lines: events are always merged in time order.
    #[arg(long)]
    pub order: bool,
}

impl TraceArgs {
    /// `analyzer`'s options with these flags; the per-analyzer ones are added by
    /// [`KeyArg`], [`PerinsArg`] and [`ThanArg`].
    pub fn options(&self, analyzer: AnalyzerKind) -> TraceOptions {
        TraceOptions {
            interval: self.interval.filter(|&ms| ms > 0).map(Duration::from_millis),
            ..TraceOptions::new(analyzer, self.events.clone())
        }
    }
}

// `-k`: for analyzers that key events (multi-trace, top -e, trace, kmemleak, kmemprof,
// nested-trace).
#[derive(Args, Clone, Debug, Default)]
pub struct KeyArg {
    /// Default key expression for events without `key=`.
    #[arg(short = 'k', long = "key", value_name = "EXPR")]
    pub key: Option<String>,
}

impl KeyArg {
    pub fn apply(&self, trace: &mut TraceOptions) {
        trace.key = self.key.clone();
    }
}

// `--perins`: for analyzers with a per-instance split.
#[derive(Args, Clone, Debug, Default)]
pub struct PerinsArg {
    /// Split the statistics per instance (CPU or thread).
    #[arg(long)]
    pub perins: bool,
}

impl PerinsArg {
    pub fn apply(&self, trace: &mut TraceOptions) {
        trace.perins = self.perins;
    }
}

// `--than`: for analyzers with latencies (or values) to hold against a threshold.
#[derive(Args, Clone, Debug, Default)]
pub struct ThanArg {
    /// Threshold (`4ms`, `100us`, plain ns): count latencies above it and list the events.
    #[arg(long, value_name = "TIME", value_parser = parse_duration_ns)]
    pub than: Option<u64>,
}

impl ThanArg {
    pub fn apply(&self, trace: &mut TraceOptions) {
        trace.than_ns = self.than;
    }
}

// `--perins` and `--than` together: the latency analyzers (syscalls, num-dist,
// rundelay, multi-trace, task-state, kvm-exit) take both.
#[derive(Args, Clone, Debug, Default)]
pub struct LatencyArgs {
    #[command(flatten)]
    pub perins: PerinsArg,
    #[command(flatten)]
    pub than: ThanArg,
}

impl LatencyArgs {
    pub fn apply(&self, trace: &mut TraceOptions) {
        self.perins.apply(trace);
        self.than.apply(trace);
    }
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum ImplArg {
    Delay,
    Pair,
}

// `multi-trace` only.
#[derive(Args, Clone, Debug)]
pub struct MultiTraceArgs {
    /// How two events relate: the delay between them, or only whether they pair.
    #[arg(long = "impl", value_enum, default_value_t = ImplArg::Delay, ignore_case = true)]
    pub implementation: ImplArg,
    /// The last stage pairs back with the first.
    #[arg(long)]
    pub cycle: bool,
    #[command(flatten)]
    pub latency: LatencyWorkflowArgs,
}

// perf-prof's latency workflow on pairs (multi-trace and rundelay, which is one).
#[derive(Args, Clone, Debug)]
pub struct LatencyWorkflowArgs {
    /// List the pairs closer than TIME too (`--than` lists the slower ones): their two
    /// events, as the slow ones.
    #[arg(long, value_name = "TIME", value_parser = parse_duration_ns)]
    pub lower: Option<u64>,
    /// Write each pair's `<end time ns> <latency ns>` lines to FILE-<start>-<end>.lat
    /// (perf-prof's heatmap file; `trace2heatmap.pl --unitstime=ns --unitslabel=ns --grid`
    /// draws it).
    #[arg(long, value_name = "FILE")]
    pub heatmap: Option<String>,
    /// As --than, and an interval's table prints only when some pair took longer than
    /// TIME (until then the intervals add up, as perf-prof's).
    #[arg(long, value_name = "TIME", value_parser = parse_duration_ns, conflicts_with = "than")]
    pub only_than: Option<u64>,
    /// List the events between the two of each pair --than/--lower lists (`untraced`
    /// events too): all of them, or `=samecpu`, `=samepid`, `=sametid`.
    #[arg(long, value_name = "LIST", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub detail: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Probe {
        #[command(flatten)]
        host: HostArgs,
        #[command(flatten)]
        trace: TraceArgs,
        #[command(flatten)]
        latency: LatencyArgs,
    }

    #[test]
    fn perf_prof_command_lines_parse() {
        let p = Probe::try_parse_from([
            "x",
            "-e",
            "raw_syscalls:sys_enter",
            "-e",
            "raw_syscalls:sys_exit",
            "-i",
            "1000",
            "-m",
            "64",
            "-C",
            "1",
            "--perins",
            "--than",
            "1ms",
            "--order",
        ])
        .unwrap();
        let run = p.host.run_options().unwrap();
        assert_eq!(run.target.cpus.as_deref(), Some("1"));
        assert_eq!(run.ring.pages, Some(64));
        let mut trace = p.trace.options(AnalyzerKind::Syscalls);
        p.latency.apply(&mut trace);
        assert_eq!(trace.events.len(), 2);
        assert_eq!(trace.interval, Some(Duration::from_millis(1000)));
        assert_eq!(trace.than_ns, Some(1_000_000));
        assert!(trace.perins);
    }

    #[test]
    fn profile_takes_perf_profs_exclude_options() {
        #[derive(Parser)]
        struct Sampling {
            #[command(flatten)]
            sampling: SamplingArgs,
        }
        let p = Sampling::try_parse_from(["x", "-F", "997", "-g", "--exclude-user"]);
        let p = p.unwrap_or_else(|e| panic!("{e}"));
        assert!(p.sampling.kernel_only && !p.sampling.user_only);
        let p = Sampling::try_parse_from(["x", "--exclude-kernel"]).unwrap();
        assert!(p.sampling.user_only && !p.sampling.kernel_only);
        assert!(Sampling::try_parse_from(["x", "--exclude-user", "--exclude-kernel"]).is_err());
    }

    #[test]
    fn bad_values_say_what_is_wrong() {
        let p = Probe::try_parse_from(["x", "-m", "48"]).unwrap();
        assert!(p.host.run_options().unwrap_err().contains("power of two"));
        let e = Probe::try_parse_from(["x", "--than", "4min"])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("unknown unit"), "{e}");
        assert!(Probe::try_parse_from(["x", "-C", "0", "-p", "1"]).is_err());
        let p = Probe::try_parse_from(["x", "--", "dd", "if=/dev/zero", "count=3"]).unwrap();
        assert_eq!(p.host.workload, ["dd", "if=/dev/zero", "count=3"]);
        assert!(
            p.host.run_options().unwrap().target.inherit,
            "a workload's children are followed"
        );
        let p = Probe::try_parse_from(["x", "--no-inherit", "--", "dd"]).unwrap();
        assert!(!p.host.run_options().unwrap().target.inherit);
        let p = Probe::try_parse_from(["x", "-p", "1"]).unwrap();
        assert!(
            !p.host.run_options().unwrap().target.inherit,
            "-p inherits only with --inherit"
        );
        assert!(Probe::try_parse_from(["x", "--inherit", "--no-inherit"]).is_err());
    }

    #[derive(Parser)]
    struct SamplingProbe {
        #[command(flatten)]
        host: HostArgs,
        #[command(flatten)]
        sampling: SamplingArgs,
    }

    fn call_graph(args: &[&str]) -> Result<(Option<CallGraph>, SamplingOptions), String> {
        let p = SamplingProbe::try_parse_from(std::iter::once("top").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        let options = p.sampling.options()?;
        Ok((p.sampling.call_graph, options))
    }

    #[test]
    fn call_graph_takes_perfs_fp_and_dwarf_with_a_size() {
        let dwarf = |bytes| CallGraph::Dwarf { stack_bytes: bytes };
        // No flag: callchains with frame pointers, as before.
        let (flag, options) = call_graph(&[]).unwrap();
        assert_eq!(
            (flag, options.callchain, options.call_graph),
            (None, true, CallGraph::FramePointer)
        );
        // -g alone (perf-prof's) and --call-graph fp.
        assert_eq!(call_graph(&["-g"]).unwrap().0, Some(CallGraph::FramePointer));
        assert_eq!(
            call_graph(&["-F", "99", "-g", "--exclude-user"]).unwrap().0,
            Some(CallGraph::FramePointer)
        );
        assert_eq!(
            call_graph(&["--call-graph", "fp"]).unwrap().0,
            Some(CallGraph::FramePointer)
        );
        // -g before a workload does not swallow it.
        let p = SamplingProbe::try_parse_from(["top", "-g", "--", "./busy", "3"]).unwrap();
        assert_eq!(
            (p.sampling.call_graph, &p.host.workload[..]),
            (
                Some(CallGraph::FramePointer),
                &["./busy".to_string(), "3".to_string()][..]
            )
        );
        // dwarf: perf's default size, or the one given.
        let (_, options) = call_graph(&["--call-graph", "dwarf"]).unwrap();
        assert_eq!(options.call_graph, dwarf(8192));
        assert!(options.callchain);
        assert_eq!(
            call_graph(&["--call-graph=dwarf,16384"]).unwrap().1.call_graph,
            dwarf(16384)
        );
        assert_eq!(
            call_graph(&["-g", "dwarf,65528"]).unwrap().1.call_graph,
            dwarf(65528)
        );
        assert_eq!(
            call_graph(&["--call-graph", "dwarf,0x1000"])
                .unwrap()
                .1
                .call_graph,
            dwarf(4096)
        );
    }

    #[test]
    fn bad_call_graphs_say_what_to_give() {
        let err = |args: &[&str]| {
            call_graph(args)
                .err()
                .unwrap_or_else(|| panic!("{args:?} parsed"))
        };
        let e = err(&["--call-graph", "dwarf,1001"]);
        assert!(e.contains("multiple of 8") && e.contains("1008"), "{e}");
        let e = err(&["--call-graph", "dwarf,65536"]);
        assert!(e.contains("65528"), "{e}");
        let e = err(&["--call-graph", "dwarf,big"]);
        assert!(e.contains("not a number"), "{e}");
        let e = err(&["--call-graph", "frames"]);
        assert!(e.contains("fp") && e.contains("dwarf[,SIZE]"), "{e}");
        let e = err(&["--call-graph", "fp,8192"]);
        assert!(e.contains("fp takes no size"), "{e}");
        let e = err(&["--call-graph", "dwarf", "--kernel-only"]);
        assert!(e.contains("drop --kernel-only"), "{e}");
        assert!(call_graph(&["--call-graph", "dwarf", "--no-call-graph"]).is_err());
    }
}
