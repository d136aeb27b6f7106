//! perf-prof's `--heatmap FILE`: every closed pair of a multi-trace session as a line
//! `<end time ns> <latency ns>` in `FILE-<start>-<end>.lat`, one file per pair of events —
//! the input of Brendan Gregg's `trace2heatmap.pl --unitstime=ns --unitslabel=ns --grid`.
//!
//! The files are opened when the session starts (an unwritable path fails the run before
//! any event, not after), written as the pairs close, and flushed at the end.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use anyhow::Context;

use crate::analyzers::multi_trace::HeatPoint;

pub struct HeatmapFiles {
    /// By pair index.
    files: Vec<(PathBuf, BufWriter<File>)>,
}

impl HeatmapFiles {
    /// `FILE-<start>-<end>.lat` for each pair's event names.
    pub fn create(prefix: &str, pairs: &[(String, String)]) -> anyhow::Result<HeatmapFiles> {
        let files = pairs
            .iter()
            .map(|(start, end)| {
                let path = PathBuf::from(format!("{prefix}-{start}-{end}.lat"));
                // As every file perfscope writes: never through a symbolic link (the
                // check and an O_NOFOLLOW create, so a link planted between them is not
                // followed either).
                let file = crate::export::write::refuse_symlink(&path)
                    .and_then(|()| {
                        std::fs::OpenOptions::new()
                            .write(true)
                            .create(true)
                            .truncate(true)
                            .custom_flags(libc::O_NOFOLLOW)
                            .open(&path)
                    })
                    .with_context(|| format!("--heatmap: cannot create {}", path.display()))?;
                Ok((path, BufWriter::new(file)))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(HeatmapFiles { files })
    }

    pub fn write(&mut self, points: &[HeatPoint]) -> anyhow::Result<()> {
        for point in points {
            if let Some((path, out)) = self.files.get_mut(point.pair) {
                writeln!(out, "{} {}", point.end_ns, point.latency_ns)
                    .with_context(|| format!("--heatmap: cannot write {}", path.display()))?;
            }
        }
        Ok(())
    }

    /// Flush every file; the paths written.
    pub fn finish(&mut self) -> anyhow::Result<Vec<PathBuf>> {
        for (path, out) in &mut self.files {
            out.flush()
                .with_context(|| format!("--heatmap: cannot write {}", path.display()))?;
        }
        Ok(self.files.iter().map(|(p, _)| p.clone()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pair_gets_its_file_of_end_time_and_latency_lines() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("lat");
        let pairs = [
            ("softirq_entry".to_string(), "softirq_exit".to_string()),
            ("a".to_string(), "b".to_string()),
        ];
        let mut files = HeatmapFiles::create(prefix.to_str().unwrap(), &pairs).unwrap();
        let point = |pair, end_ns, latency_ns| HeatPoint {
            pair,
            end_ns,
            latency_ns,
        };
        files
            .write(&[point(0, 100, 7), point(1, 200, 9), point(0, 300, 11)])
            .unwrap();
        let written = files.finish().unwrap();
        assert_eq!(written[0], dir.path().join("lat-softirq_entry-softirq_exit.lat"));
        assert_eq!(std::fs::read_to_string(&written[0]).unwrap(), "100 7\n300 11\n");
        assert_eq!(std::fs::read_to_string(&written[1]).unwrap(), "200 9\n");
    }

    #[test]
    fn an_unwritable_prefix_fails_before_any_event() {
        let e = HeatmapFiles::create("/nonexistent-dir/x", &[("a".into(), "b".into())]);
        assert!(format!("{:#}", e.err().unwrap()).contains("/nonexistent-dir/x-a-b.lat"));
    }
}
