//! Attach mode: follow a qperf.bin that another QEMU (e.g. `cargo xtask starry perf`) is
//! writing — and its console log, if given — while they grow.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;

use crate::model::{Finding, Gap, InputInfo, PhaseMarkers};
use crate::sources::qperf_file::{PluginSummary, QperfTail, ReadReport, sidecar_path};

use super::ingest::QperfIngest;
use super::interned::FeedTables;
use super::symbol_options::{OpenOptions, SymbolSource};
use super::{Feed, FeedStatus, SessionStart, Update, Waiting};

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
pub struct FollowFeed {
    path: PathBuf,
    symbols: SymbolSource,
    options: OpenOptions,
    markers: PhaseMarkers,
    ingest: Option<(QperfIngest, FeedTables)>,
    tail: Option<QperfTail>,
    console: Option<TextTail>,
    /// Since when the file is waited for (it is not there yet), and the second last told.
    waiting: Option<(Instant, u64)>,
    /// The session ends: read what is there once more, then finish.
    stopped: bool,
}

impl FollowFeed {
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
            waiting: None,
            stopped: false,
        }
    }
}

impl Feed for FollowFeed {
    /// Following ends when the user says so: what the file holds by then is read.
    fn stop(&mut self) {
        self.stopped = true;
    }

    fn poll(&mut self, out: &mut Vec<Update>) -> anyhow::Result<FeedStatus> {
        let mut progress = false;
        if self.ingest.is_none() {
            // The sidecar appears only at QEMU's exit; without it the ELF gives the arch.
            let summary = PluginSummary::read(&sidecar_path(&self.path)).ok().flatten();
            let (ingest, info) = QperfIngest::new(
                &self.symbols,
                &self.options.with_recorded_boot(&self.path),
                &self.path.display().to_string(),
                summary.as_ref(),
            )?;
            out.push(Update::Start(SessionStart {
                label: format!("follow {}", self.path.display()),
                kind: "file".into(),
                target: self.path.display().to_string(),
                ..SessionStart::default()
            }));
            out.extend(ingest.warnings.iter().cloned().map(Update::Warning));
            if self.markers != PhaseMarkers::default() {
                out.push(Update::Markers(self.markers));
            }
            self.ingest = Some((ingest, FeedTables::new(info)));
            progress = true;
        }
        if let Some(console) = &mut self.console {
            let bytes = console.read_new().context("cannot read the console log")?;
            if !bytes.is_empty() {
                out.push(Update::Console { time_ns: None, bytes });
                progress = true;
            }
        }
        if self.tail.is_none() {
            // A growing file is read again from where it was left; a pipe or a device
            // cannot be (and opening a FIFO twice would split its bytes).
            if let Ok(file_type) = crate::input::FileType::of_path(&self.path)
                && !matches!(file_type, crate::input::FileType::Regular { .. })
            {
                anyhow::bail!(
                    "{} is {}: --follow reads a file as it grows; read this one without --follow",
                    self.path.display(),
                    file_type.described()
                );
            }
            match QperfTail::open(&self.path) {
                Ok(t) => {
                    let mut head = crate::input::InputFile::open(&self.path)?;
                    super::guess::refuse_foreign(&mut head)?;
                    self.tail = Some(t);
                    if self.waiting.take().is_some() {
                        out.push(Update::Waiting(None));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    if self.stopped {
                        // Nothing was ever there to read: nothing usable (exit 1).
                        out.push(Update::Waiting(None));
                        out.push(Update::Finding(Finding::new(
                            Gap::SourceFailed,
                            None,
                            format!("{} never appeared while it was followed", self.path.display()),
                        )));
                        return Ok(FeedStatus::Finished);
                    }
                    // Said, and said again as the wait goes on (the status line, stderr).
                    let (since, told) = *self.waiting.get_or_insert((Instant::now(), u64::MAX));
                    let elapsed = since.elapsed();
                    if elapsed.as_secs() != told {
                        self.waiting = Some((since, elapsed.as_secs()));
                        out.push(Update::Waiting(Some(Waiting {
                            what: format!("{} to appear", self.path.display()),
                            elapsed,
                            hint: "start the QEMU run that writes it, or check the path".into(),
                        })));
                        progress = true;
                    }
                    return Ok(if progress {
                        FeedStatus::Progress
                    } else {
                        FeedStatus::Idle
                    });
                }
                Err(e) => return Err(e).with_context(|| format!("cannot open {}", self.path.display())),
            }
        }
        let (Some(tail), Some((ingest, tables))) = (self.tail.as_mut(), self.ingest.as_mut()) else {
            return Ok(FeedStatus::Idle);
        };
        let batch = tail
            .poll()
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        let samples: Vec<_> = batch
            .records
            .iter()
            .filter_map(|record| ingest.add(&mut tables.tables, record))
            .collect();
        if !batch.records.is_empty() {
            progress = true;
            tables.hand_over(samples, out);
            out.push(Update::Facts(ingest.facts(tail.version().map(|v| v.as_u8()))));
            out.push(Update::Input(InputInfo {
                kind: "qperf".into(),
                path: self.path.display().to_string(),
                format: tail.version().map(|v| v.to_string()),
                records: tail.records(),
                bytes_read: tail.bytes_read(),
                end: "followed while growing".into(),
                clean: true,
                bytes_lost: 0,
            }));
        }
        if let Some(end) = batch.end {
            // A corrupt record or a replaced file: keep what we have and say why we stopped.
            let report = ReadReport {
                version: tail.version(),
                records: tail.records(),
                bytes_read: tail.bytes_read(),
                end,
                rest_unread: false,
            };
            out.push(Update::Warning(format!(
                "{}: stopped following: {report}",
                self.path.display()
            )));
            out.push(Update::Input(InputInfo {
                kind: "qperf".into(),
                path: self.path.display().to_string(),
                format: tail.version().map(|v| v.to_string()),
                records: tail.records(),
                bytes_read: tail.bytes_read(),
                end: report.to_string(),
                clean: false,
                bytes_lost: report.bytes_lost(),
            }));
            return Ok(FeedStatus::Finished);
        }
        if self.stopped && batch.records.is_empty() {
            // Stopped, and the last read found nothing more.
            return Ok(FeedStatus::Finished);
        }
        Ok(if progress {
            FeedStatus::Progress
        } else {
            FeedStatus::Idle
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Engine, EngineOptions};
    use crate::model::Selection;
    use crate::sources::qperf_file::{Callchain, QperfRecord, encode_v3};
    use std::io::Write;
    use std::path::Path;

    fn assets() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
    }

    /// Poll `feed` once into `engine`.
    fn step(feed: &mut FollowFeed, engine: &mut Engine) -> FeedStatus {
        let mut updates = Vec::new();
        let status = feed.poll(&mut updates).unwrap();
        engine.apply(updates);
        status
    }

    #[test]
    fn follows_a_growing_file_and_its_console() {
        let (records, _) =
            crate::sources::qperf_file::read_file(assets().join("tinyk-riscv64.qperf.bin")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("qperf.bin");
        let log = dir.path().join("console.txt");
        let mut source = FollowFeed::new(
            bin.clone(),
            SymbolSource::Elf(assets().join("tinyk-riscv64.elf")),
            OpenOptions::default(),
            Some(log.clone()),
            PhaseMarkers::default(),
        );
        let mut engine = Engine::new(EngineOptions::batch(Selection::all()));
        // Nothing there yet: waiting, not an error.
        step(&mut source, &mut engine);
        let waiting = engine.state.stats.waiting.clone().expect("waiting is said");
        assert!(waiting.what.ends_with("qperf.bin to appear"), "{waiting:?}");
        assert_eq!(step(&mut source, &mut engine), FeedStatus::Idle);

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
        assert_eq!(step(&mut source, &mut engine), FeedStatus::Progress);
        assert_eq!(engine.state.stats.samples, 700);
        assert_eq!(engine.state.console.get(1).unwrap().text, "BENCH_START");

        f.write_all(&next[next.len() / 2..]).unwrap();
        for r in &records[701..] {
            let mut b = Vec::new();
            encode_v3(r, &mut b);
            f.write_all(&b).unwrap();
        }
        assert_eq!(step(&mut source, &mut engine), FeedStatus::Progress);
        assert_eq!(engine.state.stats.samples, 1435);
        assert_eq!(engine.state.provenance.facts.format_version, Some(3));
        let snapshot = engine.snapshot();
        let mix = snapshot.frames.get("mix_leaf").unwrap();
        assert_eq!(snapshot.hotspots.get(mix).unwrap().self_weight, 791);
        assert_eq!(step(&mut source, &mut engine), FeedStatus::Idle);

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
        assert_eq!(step(&mut source, &mut engine), FeedStatus::Finished);
        assert_eq!(engine.state.stats.samples, 1435);
        assert!(
            engine
                .state
                .provenance
                .warnings
                .last()
                .unwrap()
                .contains("stopped following")
        );
    }
}
