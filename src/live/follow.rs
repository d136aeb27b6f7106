//! Attach mode: follow a qperf.bin that another QEMU (e.g. `cargo xtask starry perf`) is
//! writing — and its console log, if given — while they grow.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;

use anyhow::Context;

use crate::ingest::QperfIngest;
use crate::ingest::open::{OpenOptions, SymbolSource};
use crate::model::{InputInfo, PhaseMarkers};
use crate::sources::qperf_file::{PluginSummary, QperfTail, ReadReport, sidecar_path};

use super::source::{Source, SourcePoll};
use super::state::ModelState;

/// A growing text file read from where we left off.
struct TextTail {
    path: PathBuf,
    file: Option<File>,
    offset: u64,
}

impl TextTail {
    fn read_new(&mut self) -> io::Result<Vec<u8>> {
        if self.file.is_none() {
            match File::open(&self.path) {
                Ok(f) => self.file = Some(f),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(e) => return Err(e),
            }
        }
        let Some(file) = self.file.as_mut() else {
            return Ok(Vec::new());
        };
        let len = file.metadata()?.len();
        if len < self.offset {
            // Truncated and rewritten (a new run): start over.
            self.offset = 0;
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let mut buf = Vec::new();
        file.take(1 << 20).read_to_end(&mut buf)?;
        self.offset += buf.len() as u64;
        Ok(buf)
    }
}

/// Follows `path` from the start, symbolizing records as they are completed.
pub struct FollowSource {
    path: PathBuf,
    symbols: SymbolSource,
    options: OpenOptions,
    markers: PhaseMarkers,
    ingest: Option<QperfIngest>,
    tail: Option<QperfTail>,
    console: Option<TextTail>,
    waiting_reported: bool,
}

impl FollowSource {
    pub fn new(
        path: PathBuf,
        symbols: SymbolSource,
        options: OpenOptions,
        console: Option<PathBuf>,
        markers: PhaseMarkers,
    ) -> Self {
        Self {
            path,
            symbols,
            options,
            markers,
            ingest: None,
            tail: None,
            console: console.map(|path| TextTail {
                path,
                file: None,
                offset: 0,
            }),
            waiting_reported: false,
        }
    }
}

impl Source for FollowSource {
    fn poll(&mut self, state: &mut ModelState) -> anyhow::Result<SourcePoll> {
        let mut progress = false;
        if self.ingest.is_none() {
            // The sidecar appears only at QEMU's exit; without it the ELF gives the arch.
            let summary = PluginSummary::read(&sidecar_path(&self.path)).ok().flatten();
            let (ingest, profile) = QperfIngest::new(
                &self.symbols,
                &self.options,
                &self.path.display().to_string(),
                summary.as_ref(),
            )?;
            state.warnings.extend(ingest.warnings.iter().cloned());
            state.profile = profile;
            state.markers = self.markers;
            state.stats.source = format!("follow {}", self.path.display());
            self.ingest = Some(ingest);
        }
        if let Some(console) = &mut self.console {
            let bytes = console.read_new().context("cannot read the console log")?;
            if !bytes.is_empty() {
                state.console.push_bytes(None, &bytes);
                progress = true;
            }
        }
        if self.tail.is_none() {
            match QperfTail::open(&self.path) {
                Ok(t) => self.tail = Some(t),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    if !self.waiting_reported {
                        state
                            .warnings
                            .push(format!("waiting for {} to appear", self.path.display()));
                        self.waiting_reported = true;
                    }
                    return Ok(if progress {
                        SourcePoll::Progress
                    } else {
                        SourcePoll::Idle
                    });
                }
                Err(e) => return Err(e).with_context(|| format!("cannot open {}", self.path.display())),
            }
        }
        let (Some(tail), Some(ingest)) = (self.tail.as_mut(), self.ingest.as_mut()) else {
            return Ok(SourcePoll::Idle);
        };
        let batch = tail
            .poll()
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        for record in &batch.records {
            ingest.add(&mut state.profile, record);
        }
        if !batch.records.is_empty() {
            progress = true;
            state.facts = ingest.facts(tail.version().map(|v| v.as_u8()));
            state.input = InputInfo {
                kind: "qperf".into(),
                path: self.path.display().to_string(),
                format: tail.version().map(|v| v.to_string()),
                records: tail.records(),
                bytes_read: tail.bytes_read(),
                end: "followed while growing".into(),
                clean: true,
                bytes_lost: 0,
            };
        }
        if let Some(end) = batch.end {
            // A corrupt record or a replaced file: keep what we have and say why we stopped.
            let report = ReadReport {
                version: tail.version(),
                records: tail.records(),
                bytes_read: tail.bytes_read(),
                end,
            };
            state
                .warnings
                .push(format!("{}: stopped following: {report}", self.path.display()));
            state.input.end = report.to_string();
            state.input.clean = false;
            return Ok(SourcePoll::Finished);
        }
        Ok(if progress {
            SourcePoll::Progress
        } else {
            SourcePoll::Idle
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::qperf_file::{Callchain, QperfRecord, encode_v3};
    use std::io::Write;
    use std::path::Path;

    fn assets() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
    }

    #[test]
    fn follows_a_growing_file_and_its_console() {
        let (records, _) =
            crate::sources::qperf_file::read_file(assets().join("tinyk-riscv64.qperf.bin")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("qperf.bin");
        let log = dir.path().join("console.txt");
        let mut source = FollowSource::new(
            bin.clone(),
            SymbolSource::Elf(assets().join("tinyk-riscv64.elf")),
            OpenOptions::default(),
            Some(log.clone()),
            PhaseMarkers::default(),
        );
        let mut state = ModelState::default();
        // Nothing there yet: waiting, not an error.
        assert_eq!(source.poll(&mut state).unwrap(), SourcePoll::Idle);
        assert!(state.warnings[0].starts_with("waiting for"));

        let mut bytes = Vec::new();
        for r in &records[..700] {
            encode_v3(r, &mut bytes);
        }
        // Half a record more: it must wait.
        let mut next = Vec::new();
        encode_v3(&records[700], &mut next);
        let mut f = File::create(&bin).unwrap();
        f.write_all(&bytes).unwrap();
        f.write_all(&next[..next.len() / 2]).unwrap();
        std::fs::write(&log, "starry:~# bench 700\nBENCH_START\n").unwrap();
        assert_eq!(source.poll(&mut state).unwrap(), SourcePoll::Progress);
        assert_eq!(state.profile.samples().len(), 700);
        assert_eq!(state.console.lines()[1].text, "BENCH_START");

        f.write_all(&next[next.len() / 2..]).unwrap();
        for r in &records[701..] {
            let mut b = Vec::new();
            encode_v3(r, &mut b);
            f.write_all(&b).unwrap();
        }
        assert_eq!(source.poll(&mut state).unwrap(), SourcePoll::Progress);
        assert_eq!(state.profile.samples().len(), 1435);
        assert_eq!(state.facts.format_version, Some(3));
        let mix = state.profile.frames.get("mix_leaf").unwrap();
        let leafs = state
            .profile
            .samples()
            .iter()
            .filter(|s| state.profile.stack_frames(s.stack).last() == Some(mix))
            .count();
        assert_eq!(leafs, 791);
        assert_eq!(source.poll(&mut state).unwrap(), SourcePoll::Idle);

        // A corrupt record stops following and keeps everything.
        let hostile = QperfRecord {
            elapsed_ns: Some(1),
            pc: 1,
            sp: Some(1),
            fp: Some(1),
            cpu: Some(0),
            callchain: Some(Callchain::Leaf),
            trace: Vec::new(),
        };
        let mut b = Vec::new();
        encode_v3(&hostile, &mut b);
        b.pop();
        b.push(0xfd);
        b.extend_from_slice(&u64::MAX.to_le_bytes());
        f.write_all(&b).unwrap();
        assert_eq!(source.poll(&mut state).unwrap(), SourcePoll::Finished);
        assert_eq!(state.profile.samples().len(), 1435);
        assert!(state.warnings.last().unwrap().contains("stopped following"));
    }
}
