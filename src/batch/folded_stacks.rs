//! `--flame-graph FILE` (perf-prof's trace and profile): stacks written as `FILE.folded`
//! (a previous file kept as `FILE.folded.old`), root first with the comm as the root, one
//! `a;b;c COUNT` line per distinct stack, and perf-prof's note on how to draw it. Written
//! at the end of the run, or one section per `-i` interval, each stack then under the
//! interval's `YYYY-MM-DD;HH:MM:SS` frame so one flame graph shows the time. An empty
//! name (`--flame-graph ''`) writes to stdout instead, as perf-prof does.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::analyzers::text::WallClock;
use crate::engine::Engine;
use crate::feeds::Update;
use crate::model::stack::StackId;
use crate::model::tables::ProfileTables;

use super::headless::Sink;

/// Counts the stacks of a section, writes them when it ends.
pub struct FoldedStacks {
    /// `None`: stdout.
    path: Option<PathBuf>,
    counts: BTreeMap<StackId, u64>,
    /// The frame above the comm of every stack of this section (`-i`: its start time).
    section: Option<String>,
    /// The file was created (the old one moved aside): later sections append.
    created: bool,
    /// Some stack line went to the file (the note on drawing it is printed then).
    wrote_lines: bool,
}

impl FoldedStacks {
    /// `name` as perf-prof takes it: `name.folded` is written; an empty name is stdout.
    pub fn new(name: &Path) -> Self {
        let path = (!name.as_os_str().is_empty()).then(|| {
            let mut path = name.as_os_str().to_owned();
            path.push(".folded");
            PathBuf::from(path)
        });
        Self {
            path,
            counts: BTreeMap::new(),
            section: None,
            created: false,
            wrote_lines: false,
        }
    }

    /// Where the stacks go (`None`: stdout).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Count `weight` more of `stack` in the current section.
    pub fn add(&mut self, stack: StackId, weight: u64) {
        *self.counts.entry(stack).or_default() += weight;
    }

    /// The stacks added from now on sit under a `YYYY-MM-DD;HH:MM:SS` frame of `at`.
    pub fn start_section(&mut self, at: &WallClock) {
        self.section = Some(format!(
            "{:04}-{:02}-{:02};{:02}:{:02}:{:02}",
            at.year, at.month, at.day, at.hour, at.minute, at.second
        ));
    }

    /// Write the current section's stacks and start counting afresh.
    pub fn write_section(&mut self, engine: &Engine) -> anyhow::Result<()> {
        // Two ids may fold to one text (the same names at other addresses): add them up.
        let mut lines: BTreeMap<String, u64> = BTreeMap::new();
        for (&stack, &count) in &std::mem::take(&mut self.counts) {
            let mut text = folded_stack(&engine.state.tables, stack);
            if let Some(section) = &self.section {
                text = format!("{section};{text}");
            }
            *lines.entry(text).or_default() += count;
        }
        let mut text = String::new();
        for (stack, count) in &lines {
            text.push_str(&format!("{stack} {count}\n"));
        }
        let Some(path) = &self.path else {
            return Ok(crate::stdio::print(&text)?);
        };
        let cannot =
            |e: std::io::Error| anyhow::anyhow!("--flame-graph: cannot write {}: {e}", path.display());
        if !self.created {
            // A symbolic link there is refused (not moved aside), as everywhere.
            crate::export::write::refuse_symlink(path).map_err(cannot)?;
            if path.exists() {
                let mut old = path.as_os_str().to_owned();
                old.push(".old");
                std::fs::rename(path, &old).map_err(cannot)?;
            }
            self.created = true;
        }
        // Every section is appended to one file, never through a symbolic link.
        crate::export::write::open_append(path)
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .map_err(cannot)?;
        self.wrote_lines |= !lines.is_empty();
        Ok(())
    }

    /// The last section, then (for a file that got stacks) perf-prof's note on stdout.
    pub fn finish(&mut self, engine: &Engine) -> anyhow::Result<()> {
        self.write_section(engine)?;
        let Some(path) = &self.path else {
            return Ok(());
        };
        if !self.wrote_lines {
            return Ok(());
        }
        let svg = path.with_extension("svg");
        crate::stdio::print(&format!(
            "To generate the flame graph, running THIS shell command:\n\n  flamegraph.pl {} > {}\n\n",
            path.display(),
            svg.display()
        ))?;
        Ok(())
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

/// trace's use: every event's stack, written at the end.
impl Sink for FoldedStacks {
    fn updates(&mut self, updates: &[Update]) {
        for update in updates {
            if let Update::Samples(samples) = update {
                for sample in samples {
                    self.add(sample.stack, sample.weight);
                }
            }
        }
    }

    fn applied(&mut self, engine: &Engine, finished: bool) -> anyhow::Result<()> {
        if finished {
            self.finish(engine)?;
        }
        Ok(())
    }
}
