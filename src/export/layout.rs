//! Where artifacts go: the reference tools' layout, so a user finds files where
//! `cargo xtask starry perf` puts them.
//!
//! ```text
//! <out>/perf/<arch>/latest/            report.json report.md hotspots.csv hotspot_categories.csv
//!                                      an analysis's <analyzer>.txt|csv|json latency.csv latency/
//!                                      offenders.txt offenders.json heatmap.csv
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

/// An analysis's table files at the top of `latest/`: `<analyzer>.txt|csv|json`.
fn analysis_file(name: &str) -> bool {
    const ANALYZERS: [&str; 19] = [
        "syscalls",
        "rundelay",
        "multi-trace",
        "top",
        "stat",
        "hrcount",
        "percpu-stat",
        "page-faults",
        "trace",
        "task-state",
        "oncpu",
        "num-dist",
        "kvm-exit",
        "hrtimer",
        "watchdog",
        "blktrace",
        "kmemleak",
        "kmemprof",
        "nested-trace",
    ];
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    matches!(ext, "txt" | "csv" | "json") && (ANALYZERS.contains(&stem) || stem == "sql")
}

/// An architecture name fit to be one directory under `perf/`: `riscv64`, `x86_64`,
/// `unknown` — letters, digits, `_` and `-`, at most 64 of them.
fn check_arch_name(arch: &str) -> std::io::Result<()> {
    let fits = !arch.is_empty()
        && arch.len() <= 64
        && arch
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if fits {
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "the architecture {:?} is not a name perfscope writes a directory for (letters, digits, `_`, `-`)",
                crate::model::text::escape_controls(arch)
            ),
        ))
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
    /// The layout under `out_root` for `arch`, which becomes a directory name: a name read
    /// from a session file or given on the command line (`/abs`, `../..`) must not lead
    /// outside `--out`.
    pub fn new(out_root: &Path, arch: &str) -> std::io::Result<Self> {
        check_arch_name(arch)?;
        let work_dir = out_root.join("perf").join(arch).join("latest");
        let qperf_dir = work_dir.join("qperf");
        Ok(Self { work_dir, qperf_dir })
    }

    /// Whether the export writes (and so owns) the file at `rel` under `latest/`: what it
    /// owns is replaced by each export; anything else (the plugin's `qperf.bin` and summary,
    /// the run's `qemu.toml`, `profile.stdout`, a user's notes) is kept.
    pub fn owns(rel: &Path) -> bool {
        let name = rel.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let parent = rel.parent().map(|p| p.to_string_lossy()).unwrap_or_default();
        match parent.as_ref() {
            "" => {
                matches!(
                    name.as_ref(),
                    "report.json"
                        | "report.md"
                        | "hotspots.csv"
                        | "hotspot_categories.csv"
                        | "latency.csv"
                        | "latency"
                        | "offenders.txt"
                        | "offenders.json"
                        | "heatmap.csv"
                ) || analysis_file(&name)
            }
            "latency" => true,
            "qperf" => {
                let derived = |prefix: &str, suffix: &str| name.starts_with(prefix) && name.ends_with(suffix);
                matches!(
                    name.as_ref(),
                    "flamegraph.html" | "profile.pb.gz" | "window.json" | "summary.txt"
                ) || derived("stack", ".folded")
                    || derived("flamegraph", ".svg")
                    || derived("resolve", ".stats.json")
                    || derived("stack-depth-summary", ".csv")
            }
            _ => false,
        }
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
    /// The `--than` offenders as the pane prints them.
    pub fn offenders_txt(&self) -> PathBuf {
        self.work_dir.join("offenders.txt")
    }
    /// The `--than` offenders, one record per pair.
    pub fn offenders_json(&self) -> PathBuf {
        self.work_dir.join("offenders.json")
    }
    /// The latency heatmap's counts.
    pub fn heatmap_csv(&self) -> PathBuf {
        self.work_dir.join("heatmap.csv")
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_reference_layout() {
        let l = OutputLayout::new(Path::new("/o"), "riscv64").unwrap();
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
    }

    /// What the export writes is replaced by the next export; what it never writes (the
    /// recording, the run's files, a user's) is kept.
    #[test]
    fn the_export_owns_its_derived_files_and_nothing_recorded() {
        let l = OutputLayout::new(Path::new("/o"), "x").unwrap();
        let rel = |p: PathBuf| p.strip_prefix(&l.work_dir).unwrap().to_path_buf();
        let mut derived = vec![
            l.html(),
            l.pprof(),
            l.window_json(),
            l.summary_txt(),
            l.report_json(),
            l.report_md(),
            l.hotspots_csv(),
            l.categories_csv(),
            l.work_dir.join("syscalls.txt"),
            l.work_dir.join("multi-trace.json"),
            l.work_dir.join("latency.csv"),
            l.work_dir.join("latency/001-read.csv"),
            l.offenders_txt(),
            l.offenders_json(),
            l.heatmap_csv(),
        ];
        for v in Variant::ALL {
            let p = l.variant(v);
            derived.extend([p.folded, p.svg, p.stats, p.depth]);
        }
        for p in derived {
            assert!(OutputLayout::owns(&rel(p.clone())), "{}", p.display());
        }
        for kept in [
            "qperf/qperf.bin",
            "qperf/qperf.summary.txt",
            "qperf/qemu.toml",
            "qperf/qemu.time.txt",
            "profile.stdout",
            "notes.txt",
            "session.db",
        ] {
            assert!(!OutputLayout::owns(Path::new(kept)), "{kept}");
        }
    }

    #[test]
    fn an_architecture_that_is_not_a_plain_name_is_refused() {
        for bad in ["", "/abs", "../../..", "x/y", "a\u{1b}[31m", &"x".repeat(65)] {
            assert!(OutputLayout::new(Path::new("/o"), bad).is_err(), "{bad:?}");
        }
        for good in ["riscv64", "x86_64", "loongarch64", "unknown", "aarch64-be"] {
            assert!(OutputLayout::new(Path::new("/o"), good).is_ok(), "{good}");
        }
    }
}
