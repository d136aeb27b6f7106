//! `kmemleak`'s and `kmemprof`'s command lines: perf-prof's `--alloc EVENT --free EVENT`
//! (kmemleak) and `-e ALLOC -e FREE` (both) made into the two stages the analyzers read
//! (the first allocates, the second frees).

use clap::Args;

use super::host::{HostArgs, KeyArg, ThanArg, TraceArgs};
use super::tui::TuiArgs;
use crate::analyzers::options::{AnalyzerKind, TraceOptions};

#[derive(Args)]
pub struct KmemleakCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub key: KeyArg,
    #[command(flatten)]
    pub than: ThanArg,
    /// Alloc events `sys:name/filter/ptr=EXPR/size=EXPR/stack/,...` (or the first -e).
    #[arg(long, value_name = "EVENT,...")]
    pub alloc: Option<String>,
    /// Free events `sys:name/filter/ptr=EXPR/,...` (or the second -e).
    #[arg(long, value_name = "EVENT,...")]
    pub free: Option<String>,
    /// Sample every alloc and free event's stack (as `stack` on each).
    #[arg(short = 'g', long = "call-graph")]
    pub call_graph: bool,
    #[command(flatten)]
    pub tui: TuiArgs,
}

impl KmemleakCommandArgs {
    pub fn options(&self) -> anyhow::Result<TraceOptions> {
        let mut trace = self.trace.options(AnalyzerKind::Kmemleak);
        self.key.apply(&mut trace);
        self.than.apply(&mut trace);
        trace.events = stages("kmemleak", &self.alloc, &self.free, &self.trace.events)?;
        trace.call_graph = self.call_graph;
        // perf-prof's kmemleak reports once, at the end: it has no interval print.
        trace.interval = None;
        Ok(trace)
    }
}

#[derive(Args)]
pub struct KmemprofCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub key: KeyArg,
    #[command(flatten)]
    pub tui: TuiArgs,
}

impl KmemprofCommandArgs {
    pub fn options(&self) -> anyhow::Result<TraceOptions> {
        let mut trace = self.trace.options(AnalyzerKind::Kmemprof);
        self.key.apply(&mut trace);
        trace.events = stages("kmemprof", &None, &None, &self.trace.events)?;
        Ok(trace)
    }
}

/// The alloc stage then the free stage, from `--alloc`/`--free` or two `-e`.
fn stages(
    analyzer: &str,
    alloc: &Option<String>,
    free: &Option<String>,
    events: &[String],
) -> anyhow::Result<Vec<String>> {
    let example = "-e 'kmem:kmalloc//ptr=ptr/size=bytes_alloc/stack/' -e 'kmem:kfree//ptr=ptr/'";
    let stages = match (alloc, free, events) {
        (Some(a), Some(f), []) => vec![a.clone(), f.clone()],
        (None, None, [a, f]) => vec![a.clone(), f.clone()],
        (None, None, []) => crate::usage!("{analyzer} needs alloc and free events: {example}"),
        (None, None, [_]) => {
            crate::usage!("{analyzer}: only the alloc events were given; add the free events: {example}")
        }
        (None, None, _) => crate::usage!(
            "{analyzer} takes two -e (alloc events, then free events; comma-separate several of one kind): {example}"
        ),
        _ if !events.is_empty() => crate::usage!("{analyzer}: give --alloc and --free, or two -e, not both"),
        _ => crate::usage!(
            "{analyzer}: --alloc and --free go together: --alloc 'kmem:kmalloc//ptr=ptr/size=bytes_alloc/stack/' --free 'kmem:kfree//ptr=ptr/'"
        ),
    };
    Ok(stages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_and_free_come_from_either_spelling_and_nothing_else() {
        let e = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            stages("kmemleak", &Some("a".into()), &Some("f".into()), &[]).unwrap(),
            ["a", "f"]
        );
        assert_eq!(
            stages("kmemleak", &None, &None, &e(&["a", "f"])).unwrap(),
            ["a", "f"]
        );
        assert!(stages("kmemleak", &None, &None, &[]).is_err());
        assert!(stages("kmemleak", &Some("a".into()), &None, &[]).is_err());
        assert!(stages("kmemleak", &None, &None, &e(&["a"])).is_err());
        assert!(stages("kmemleak", &Some("a".into()), &Some("f".into()), &e(&["x"])).is_err());
    }
}
