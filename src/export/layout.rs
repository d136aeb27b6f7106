//! Where artifacts go: the reference tools' layout, so a user finds files where
//! `cargo xtask starry perf` puts them.
//!
//! ```text
//! <out>/perf/<arch>/latest/            report.json report.md hotspots.csv hotspot_categories.csv
//! <out>/perf/<arch>/latest/qperf/      stack.folded flamegraph.svg flamegraph.html profile.pb.gz
//!                                      resolve.stats.json stack-depth-summary.csv window.json summary.txt
//!                                      stack.<variant>.folded flamegraph.<variant>.svg
//!                                      resolve.<variant>.stats.json stack-depth-summary.<variant>.csv
//! ```
//! where `<variant>` is `boot`, `workload`, `post` or `focus`.

use std::path::{Path, PathBuf};

use crate::model::Phase;

/// Which slice of the run an artifact shows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The main window (the markers' window, or the whole run).
    Main,
    Phase(Phase),
    /// `--focus` within the main window.
    Focus,
}

impl Variant {
    pub const ALL: [Variant; 5] = [
        Variant::Main,
        Variant::Phase(Phase::Boot),
        Variant::Phase(Phase::Workload),
        Variant::Phase(Phase::Post),
        Variant::Focus,
    ];

    /// `main`, `boot`, `workload`, `post`, `focus`.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Main => "main",
            Variant::Phase(p) => p.name(),
            Variant::Focus => "focus",
        }
    }

    fn infix(self) -> String {
        match self {
            Variant::Main => String::new(),
            other => format!(".{}", other.name()),
        }
    }
}

/// The per-variant files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantPaths {
    pub folded: PathBuf,
    pub svg: PathBuf,
    pub stats: PathBuf,
    pub depth: PathBuf,
}

/// The output directories of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputLayout {
    /// `<out>/perf/<arch>/latest`
    pub work_dir: PathBuf,
    /// `<out>/perf/<arch>/latest/qperf`
    pub qperf_dir: PathBuf,
}

impl OutputLayout {
    pub fn new(out_root: &Path, arch: &str) -> Self {
        let work_dir = out_root.join("perf").join(arch).join("latest");
        let qperf_dir = work_dir.join("qperf");
        Self { work_dir, qperf_dir }
    }

    pub fn variant(&self, variant: Variant) -> VariantPaths {
        let infix = variant.infix();
        let q = &self.qperf_dir;
        VariantPaths {
            folded: q.join(format!("stack{infix}.folded")),
            svg: q.join(format!("flamegraph{infix}.svg")),
            stats: q.join(format!("resolve{infix}.stats.json")),
            depth: q.join(format!("stack-depth-summary{infix}.csv")),
        }
    }

    pub fn html(&self) -> PathBuf {
        self.qperf_dir.join("flamegraph.html")
    }
    pub fn pprof(&self) -> PathBuf {
        self.qperf_dir.join("profile.pb.gz")
    }
    pub fn window_json(&self) -> PathBuf {
        self.qperf_dir.join("window.json")
    }
    pub fn summary_txt(&self) -> PathBuf {
        self.qperf_dir.join("summary.txt")
    }
    pub fn report_json(&self) -> PathBuf {
        self.work_dir.join("report.json")
    }
    pub fn report_md(&self) -> PathBuf {
        self.work_dir.join("report.md")
    }
    pub fn hotspots_csv(&self) -> PathBuf {
        self.work_dir.join("hotspots.csv")
    }
    pub fn categories_csv(&self) -> PathBuf {
        self.work_dir.join("hotspot_categories.csv")
    }

    /// Where a file of the run goes: the guest console's streams in the work directory
    /// (where xtask tees them), everything else (`qemu.time.txt`, …) in the qperf one.
    pub fn run_file(&self, name: &str) -> PathBuf {
        match name {
            "profile.stdout" | "profile.stderr" => self.work_dir.join(name),
            _ => self.qperf_dir.join(name),
        }
    }

    /// The label a file of the run is listed under (the reference's, where it has one).
    pub fn run_file_label(name: &str) -> String {
        match name {
            "profile.stdout" => "profile_stdout",
            "profile.stderr" => "profile_stderr",
            "qemu.time.txt" => "host_time",
            "qemu.perf.csv" => "host_perf",
            "qemu.toml" => "qemu_config",
            other => other,
        }
        .to_string()
    }

    /// Every derived file a run may write. Removing these (and only these) before a run
    /// keeps a stale phase graph from an earlier run from looking current, without ever
    /// touching recorded data such as `qperf/qperf.bin` beside them.
    pub fn derived_files(&self) -> Vec<PathBuf> {
        let mut files = vec![
            self.html(),
            self.pprof(),
            self.window_json(),
            self.summary_txt(),
            self.report_json(),
            self.report_md(),
            self.hotspots_csv(),
            self.categories_csv(),
        ];
        for v in Variant::ALL {
            let p = self.variant(v);
            files.extend([p.folded, p.svg, p.stats, p.depth]);
        }
        files
    }

    /// Remove derived files left by an earlier run, and the temporary files of a run that
    /// was killed mid-write (`.<derived name>.tmp-…`, see [`super::write`]).
    pub fn remove_stale(&self) -> std::io::Result<()> {
        let derived = self.derived_files();
        for f in &derived {
            match std::fs::remove_file(f) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        let prefixes: Vec<String> = derived
            .iter()
            .filter_map(|f| f.file_name())
            .map(|n| format!(".{}.tmp-", n.to_string_lossy()))
            .collect();
        for dir in [&self.work_dir, &self.qperf_dir] {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if prefixes.iter().any(|p| name.starts_with(p.as_str())) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_reference_layout() {
        let l = OutputLayout::new(Path::new("/o"), "riscv64");
        assert_eq!(l.work_dir, Path::new("/o/perf/riscv64/latest"));
        assert_eq!(
            l.variant(Variant::Main).folded,
            Path::new("/o/perf/riscv64/latest/qperf/stack.folded")
        );
        let boot = l.variant(Variant::Phase(Phase::Boot));
        assert_eq!(
            boot.svg,
            Path::new("/o/perf/riscv64/latest/qperf/flamegraph.boot.svg")
        );
        assert_eq!(
            boot.stats,
            Path::new("/o/perf/riscv64/latest/qperf/resolve.boot.stats.json")
        );
        assert_eq!(
            l.variant(Variant::Focus).depth,
            Path::new("/o/perf/riscv64/latest/qperf/stack-depth-summary.focus.csv")
        );
        assert_eq!(l.report_json(), Path::new("/o/perf/riscv64/latest/report.json"));
        assert!(!l.derived_files().iter().any(|f| f.ends_with("qperf.bin")));
    }

    #[test]
    fn stale_removes_a_killed_run_s_temporaries_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let l = OutputLayout::new(dir.path(), "x");
        std::fs::create_dir_all(&l.qperf_dir).unwrap();
        let temp = l.qperf_dir.join(".profile.pb.gz.tmp-123-4");
        let mine = l.qperf_dir.join(".my-notes.tmp-1");
        let bin = l.qperf_dir.join("qperf.bin");
        for f in [&temp, &mine, &bin] {
            std::fs::write(f, "x").unwrap();
        }
        l.remove_stale().unwrap();
        assert!(!temp.exists());
        assert!(mine.exists() && bin.exists());
    }
}
