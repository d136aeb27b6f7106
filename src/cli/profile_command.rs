//! `perfscope profile`: the CPU sampling of `top`, with perf-prof's profile text when the
//! output is not a terminal — one line per sample, `-g` callchains under them, `--than
//! PERCENT` (only busy CPUs' or threads' samples), `--flame-graph FILE` (folded stacks,
//! one section per `-i` interval) and `-N COUNT` (stop after COUNT samples).

use std::path::Path;
use std::time::Duration;

use clap::Args;

use crate::batch::busy_filter::BusyFilter;
use crate::batch::folded_stacks::FoldedStacks;
use crate::batch::headless::{self, Headless};
use crate::batch::profile_text::{ProfileText, ProfileTextOptions};
use crate::feeds::host::sampling_feed::HostSampleFeed;
use crate::model::Selection;

use super::exit::{Outcome, UsageError};
use super::host::{HostArgs, SamplingArgs};
use super::tui::TuiArgs;

#[derive(Args)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// With --flame-graph: write the folded stacks every MS milliseconds, each interval's
    /// under its start time (`YYYY-MM-DD;HH:MM:SS`).
    #[arg(short = 'i', long = "interval", value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub interval: Option<u64>,
    /// Print only the samples of CPUs (threads, with -p/-t) busy at least PERCENT of the
    /// current second (at the -F frequency).
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u64).range(1..=100))]
    pub than: Option<u64>,
    /// With -g: count the printed samples' stacks into FILE.folded instead of printing
    /// them (`''`: to stdout; with -i, only the stacks are printed).
    #[arg(long = "flame-graph", value_name = "FILE", requires = "call_graph")]
    pub flame_graph: Option<String>,
    #[command(flatten)]
    pub tui: TuiArgs,
}

impl ProfileArgs {
    /// The options of the text output, `event_name` being what the session samples.
    fn text_options(&self, event_name: &str) -> ProfileTextOptions {
        let only_flame_graph =
            self.interval.is_some() && self.flame_graph.as_ref().is_some_and(String::is_empty);
        ProfileTextOptions {
            event_name: event_name.to_string(),
            print_stacks: self.sampling.call_graph.is_some(),
            busy: self.than.map(|p| BusyFilter::new(self.sampling.freq, p)),
            folded: self
                .flame_graph
                .as_deref()
                .map(|name| FoldedStacks::new(Path::new(name))),
            interval: self.interval.map(Duration::from_millis),
            only_flame_graph,
        }
    }
}

pub fn run_profile(args: &ProfileArgs) -> anyhow::Result<Outcome> {
    args.tui.check()?;
    if !args.host.text_output() {
        if args.flame_graph.is_some() || args.than.is_some() {
            crate::usage!(
                "--than and --flame-graph shape profile's text output: pipe it, give -o FILE or \
                 --no-tui (the terminal UI has its own flamegraph and per-CPU panes)"
            );
        }
        return super::host_run::run_sampling(&args.host, &args.sampling, &args.tui);
    }
    let run = args.host.run_options().map_err(UsageError)?;
    let mut sampling = args.sampling.options().map_err(UsageError)?;
    sampling.sample_lines = true;
    // Sample lines carry the callchain only with -g, as perf-prof's.
    sampling.callchain = args.sampling.call_graph.is_some();
    let recording = super::host_run::recorder(&run, args.host.force, "host")?;
    let feed = HostSampleFeed::start(&run, &sampling)?;
    let mut text = ProfileText::new(crate::stdio::out(), args.text_options(feed.event_name()));
    let outcome = headless::run(
        Box::new(feed),
        Headless {
            selection: Selection::all(),
            // perf-prof's text on stdout; `--out DIR` asks for the artifact set beside it.
            export: args
                .host
                .out
                .is_some()
                .then(|| super::host_run::export_request(&run)),
            recording,
            progress: None,
        },
        &mut [&mut text],
    )?;
    Outcome::of_headless(&outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Probe {
        #[command(flatten)]
        profile: ProfileArgs,
    }

    fn parse(args: &[&str]) -> Result<Probe, clap::Error> {
        Probe::try_parse_from(std::iter::once("profile").chain(args.iter().copied()))
    }

    #[test]
    fn perf_profs_profile_lines_parse() {
        let p = parse(&[
            "-F",
            "997",
            "-g",
            "-i",
            "1000",
            "--than",
            "30",
            "--flame-graph",
            "cpu",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let options = p.profile.text_options("cpu-clock");
        assert_eq!(options.interval, Some(Duration::from_secs(1)));
        assert!(options.busy.is_some() && !options.only_flame_graph);
        assert_eq!(
            options.folded.as_ref().and_then(|f| f.path()),
            Some(std::path::Path::new("cpu.folded"))
        );
        let p = parse(&["-g", "-i", "500", "--flame-graph", ""]).unwrap();
        let options = p.profile.text_options("cpu-clock");
        assert!(options.only_flame_graph && options.folded.unwrap().path().is_none());
        // Without -i an empty name prints the lines and the stacks at the end.
        let p = parse(&["-g", "--flame-graph", ""]).unwrap();
        assert!(!p.profile.text_options("cpu-clock").only_flame_graph);
    }

    #[test]
    fn bad_profile_options_are_refused() {
        let err = |args: &[&str]| parse(args).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            err(&["--flame-graph", "cpu"]).contains("--call-graph"),
            "{}",
            err(&["--flame-graph", "cpu"])
        );
        assert!(err(&["--than", "0"]).contains("0"));
        assert!(err(&["--than", "101"]).contains("101"));
        assert!(!err(&["--than", "abc"]).is_empty());
        assert!(!err(&["-i", "0"]).is_empty());
    }
}
