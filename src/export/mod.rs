//! Exports: every artifact is written from the model — a profile seen through a selection —
//! so what a view shows and what a file holds are the same numbers.
//!
//! - [`layout`]: where artifacts go (`<out>/perf/<arch>/latest/…`, the reference layout).
//! - [`folded`], [`svg`], [`pprof`]: stacks for flamegraph tools.
//! - [`stats`]: resolve statistics and the stack-depth summary.
//! - [`tables`] (ranked rows), [`hotspots_csv`], [`categories`], [`report`]: tables and reports.

pub mod artifacts;
pub mod categories;
pub mod folded;
pub mod hotspots_csv;
pub mod layout;
pub mod pprof;
pub mod report;
pub mod stats;
pub mod svg;
pub mod tables;

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use crate::model::selection::SelectionMatcher;
use crate::model::{Hotspots, NodeId, Profile, Selection, StackTrie};

/// A profile seen through a selection, with the trie and hotspots derived once.
pub struct ExportView<'a> {
    pub profile: &'a Profile,
    pub selection: Selection,
    pub matcher: SelectionMatcher,
    pub trie: StackTrie,
    pub hotspots: Hotspots,
    folded: OnceCell<Vec<(NodeId, String)>>,
}

impl<'a> ExportView<'a> {
    pub fn new(profile: &'a Profile, selection: Selection) -> Self {
        let matcher = selection.matcher(profile);
        let trie = StackTrie::from_selection(profile, &matcher);
        let hotspots = Hotspots::from_trie(&trie, &profile.frames);
        Self {
            profile,
            selection,
            matcher,
            trie,
            hotspots,
            folded: OnceCell::new(),
        }
    }

    /// Every folded line with its node, in name order (computed once; the folded file,
    /// the stack tables and the reports share it).
    pub fn folded(&self) -> &[(NodeId, String)] {
        self.folded
            .get_or_init(|| folded::folded_stacks(&self.trie, &self.profile.frames, 0))
    }

    /// Total selected weight (samples, for qperf).
    pub fn total_weight(&self) -> u64 {
        self.trie.total_weight()
    }
}

/// A write that failed, with the file it was for.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {source}")]
pub struct ExportError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Write a whole file, creating its directory.
pub fn write_file(path: &Path, contents: &[u8]) -> Result<(), ExportError> {
    let err = |source| ExportError {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    std::fs::write(path, contents).map_err(err)
}
