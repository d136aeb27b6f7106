//! `--flame-graph FILE` of a tracepoint session (perf-prof's trace): the events' stacks
//! written as `FILE.folded` when the run ends (a previous file kept as `FILE.folded.old`),
//! root first with the comm as the root, one `a;b;c COUNT` line per distinct stack, and
//! perf-prof's note on how to draw it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::engine::Engine;
use crate::feeds::Update;
use crate::model::stack::StackId;
use crate::model::tables::ProfileTables;

use super::headless::Sink;

/// Counts the stacks of the events, writes them at the end.
pub struct FoldedStacks {
    path: PathBuf,
    counts: BTreeMap<StackId, u64>,
}

impl FoldedStacks {
    /// `name` as perf-prof takes it: `name.folded` is written.
    pub fn new(name: &Path) -> Self {
        let mut path = name.as_os_str().to_owned();
        path.push(".folded");
        Self {
            path: PathBuf::from(path),
            counts: BTreeMap::new(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// One stack root first, frames (inlined ones too, outermost first) joined by `;`.
pub fn folded_stack(tables: &ProfileTables, stack: StackId) -> String {
    let mut names = Vec::new();
    for &location in tables.stacks.locations(stack) {
        for line in tables.locations.get(location).lines.iter().rev() {
            names.push(tables.frames.name(line.frame).replace([';', '\n'], "_"));
        }
    }
    names.join(";")
}

impl Sink for FoldedStacks {
    fn updates(&mut self, updates: &[Update]) {
        for update in updates {
            if let Update::Samples(samples) = update {
                for sample in samples {
                    *self.counts.entry(sample.stack).or_default() += sample.weight;
                }
            }
        }
    }

    fn applied(&mut self, engine: &Engine, finished: bool) -> anyhow::Result<()> {
        if !finished {
            return Ok(());
        }
        // Two ids may fold to one text (the same names at other addresses): add them up.
        let mut lines: BTreeMap<String, u64> = BTreeMap::new();
        for (&stack, &count) in &self.counts {
            *lines
                .entry(folded_stack(&engine.state.tables, stack))
                .or_default() += count;
        }
        if self.path.exists() {
            let mut old = self.path.as_os_str().to_owned();
            old.push(".old");
            std::fs::rename(&self.path, &old)?;
        }
        let mut text = String::new();
        for (stack, count) in &lines {
            text.push_str(&format!("{stack} {count}\n"));
        }
        std::fs::write(&self.path, text)
            .map_err(|e| anyhow::anyhow!("--flame-graph: cannot write {}: {e}", self.path.display()))?;
        let svg = self.path.with_extension("svg");
        let mut out = std::io::stdout().lock();
        write!(
            out,
            "To generate the flame graph, running THIS shell command:\n\n  flamegraph.pl {} > {}\n\n",
            self.path.display(),
            svg.display()
        )?;
        out.flush()?;
        Ok(())
    }
}
