//! report.md: the run in words — its verdict, window, profile, distributions and how the
//! addresses were resolved; a guest run's reference metrics and how perfscope counts.

use super::{DIFFERENCES, Report};
use crate::model::units::ValueUnit;

impl Report<'_> {
    /// The reference's Workload Metrics and Fix Candidates sections.
    fn metrics_markdown(&self, md: &mut String) {
        let (workload, fixes) = (self.metric("workload_metrics"), self.metric("fix_candidates"));
        md.push_str("\n## Workload Metrics\n\n");
        let dd = &workload["dd"];
        let values = workload["values"].as_object().filter(|v| !v.is_empty());
        if dd.is_null() && values.is_none() {
            md.push_str("No workload stdout metrics were parsed.\n");
        }
        if let (Some(bytes), Some(s)) = (dd["bytes"].as_u64(), dd["elapsed_seconds"].as_f64()) {
            md.push_str(&format!("- dd: {bytes} bytes in {s} s\n"));
        }
        if let Some(values) = values {
            let mut keys: Vec<&String> = values.keys().collect();
            keys.sort();
            for key in keys.into_iter().take(12) {
                md.push_str(&format!("- {key}: {}\n", values[key]));
            }
        }
        md.push_str("\n## Fix Candidates\n\n");
        let fixes = fixes.as_array().cloned().unwrap_or_default();
        if fixes.is_empty() {
            md.push_str("No rule-based bottleneck fix candidates crossed the configured threshold.\n");
        }
        for fix in &fixes {
            md.push_str(&format!(
                "### {}\n\n- trigger: `{}` ({}%)\n- files: {}\n- strategy: {}\n\n",
                fix["id"].as_str().unwrap_or_default(),
                fix["trigger"].as_str().unwrap_or_default(),
                fix["percent"],
                fix["files"]
                    .as_array()
                    .map(|f| f.iter().filter_map(|v| v.as_str()).collect::<Vec<_>>().join("; "))
                    .unwrap_or_default(),
                fix["strategy"].as_str().unwrap_or_default(),
            ));
        }
    }

    pub fn to_markdown(&self) -> String {
        let i = &self.input;
        let mut md = String::from("# perfscope Performance Report\n\n");
        md.push_str(&format!("- arch: `{}`\n", i.arch));
        md.push_str(&format!("- result: `{}`\n", self.result()));
        if !self.analysis_only() {
            md.push_str(&format!(
                "- samples: {} selected of {} records\n",
                self.total_samples(),
                i.facts.raw_records
            ));
        }
        if let Some(a) = &i.analysis {
            md.push_str(&format!(
                "- analysis: `{}`, {} events, {} table rows\n",
                a.name, a.events, a.rows
            ));
            if let Some(o) = &a.offenders {
                md.push_str(&format!(
                    "- --than offenders: {} pairs, {} dropped: `{}` (as the offender pane lists them), `{}` (one record per pair)\n",
                    o.pairs,
                    o.dropped,
                    o.text.display(),
                    o.json.display()
                ));
            }
            if let Some(h) = &a.heatmap {
                md.push_str(&format!(
                    "- latency heatmap: {} columns of {} ns × {} ranges, {} counted: `{}`\n",
                    h.columns,
                    h.column_ns,
                    h.ranges,
                    h.total,
                    h.csv.display()
                ));
            }
        }
        md.push_str(&format!(
            "- input: `{}` ({}): {}\n",
            i.input.path, i.input.kind, i.input.end
        ));
        if let Some(dir) = i.artifacts.iter().find(|(k, _)| k == "work_dir") {
            md.push_str(&format!("- artifacts: `{}`\n", dir.1.display()));
        }
        self.window_markdown(&mut md);
        if !self.analysis_only() {
            self.profile_header_markdown(&mut md);
        }
        self.completeness_markdown(&mut md);
        self.latency_markdown(&mut md);
        if !self.analysis_only() {
            self.profile_markdown(&mut md);
        }
        if self.guest_notes() {
            self.metrics_markdown(&mut md);
        }
        if !self.analysis_only() {
            self.resolve_markdown(&mut md);
        }

        let mut warnings = i.window.warnings.clone();
        warnings.extend(i.warnings.iter().cloned());
        if let Some(w) = i.stats.warning() {
            warnings.push(w.to_string());
        }
        if !warnings.is_empty() {
            md.push_str("\n## Warnings\n\n");
            for w in warnings {
                md.push_str(&format!("- {w}\n"));
            }
        }

        md.push_str("\n## Artifacts\n\n");
        for (label, path) in &i.artifacts {
            md.push_str(&format!("- {label}: `{}`\n", path.display()));
        }

        if self.guest_notes() {
            md.push_str("\n## How perfscope counts (differences from qperf-analyzer and the harness)\n\n");
            for d in DIFFERENCES {
                md.push_str(&format!("- {d}\n"));
            }
        }
        // Names, paths and warnings come from binaries, session files and the guest: no
        // control character reaches a terminal that shows the file.
        crate::model::text::escape_controls_keeping_lines(&md)
    }

    /// The workload window line, when the run has one.
    fn window_markdown(&self, md: &mut String) {
        let (i, s) = (&self.input, self.input.stats);
        if !i.window.enabled {
            return;
        }
        let t = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.3} s"));
        md.push_str(&format!(
            "- workload window: {} -> {}{} ({} samples before, {} after excluded)\n",
            t(i.window.start_time),
            t(i.window.stop_time),
            if i.window.truncated_by_timeout {
                ", truncated by timeout"
            } else {
                ""
            },
            s.excluded_before,
            s.excluded_after
        ));
    }

    /// How the stacks were taken and which of them count (callchain, kernel filter, focus).
    fn profile_header_markdown(&self, md: &mut String) {
        let (i, s) = (&self.input, self.input.stats);
        match &s.callchain_method {
            Some(m) => md.push_str(&format!(
                "- callchain: `{m}`, depth (addresses) avg {:.2} max {}, frames (inlines expanded) avg {:.2} max {}, unwind success {}{}\n",
                s.avg_depth(),
                s.max_depth,
                s.avg_frames(),
                s.max_frames,
                s.selected_multi_frame_records,
                match s.idle_records {
                    0 => String::new(),
                    n => format!(", idle samples {n}"),
                }
            )),
            None => md.push_str("- callchain: unknown (the input does not say)\n"),
        }
        if let Some(k) = &i.facts.kernel_filter {
            md.push_str(&format!(
                "- kernel filter: text 0x{:x}..0x{:x}; dropped {} frames and {} samples outside it\n",
                k.text_start, k.text_end, k.frames_dropped, k.samples_dropped
            ));
        }
        if let Some(f) = &i.main.selection.focus {
            md.push_str(&format!("- focus: `{}`\n", f.pattern()));
        }
    }

    /// What the session's figures miss, how much, and what it means (the verdict); what
    /// perfscope rebuilt or could not name, said beside it.
    fn completeness_markdown(&self, md: &mut String) {
        let verdict = self.input.verdict;
        md.push_str("\n## Completeness\n\n");
        if verdict.findings.is_empty() {
            md.push_str("Nothing was lost, dropped, cut or rebuilt: the figures are everything the source delivered.\n");
            return;
        }
        for reason in verdict.reasons() {
            md.push_str(&format!("- incomplete: {reason}\n"));
        }
        for note in verdict.notes() {
            md.push_str(&format!("- note: {note}\n"));
        }
    }

    fn latency_markdown(&self, md: &mut String) {
        let Some(a) = self.input.analysis.as_ref().filter(|a| !a.series.is_empty()) else {
            return;
        };
        // A num-dist of plain numbers is a distribution, not a latency.
        let durations = a.series.iter().all(|s| s.unit == ValueUnit::Nanoseconds);
        md.push_str(if durations {
            "\n## Latency\n\n"
        } else {
            "\n## Distributions\n\n"
        });
        md.push_str("| Series | Calls | Min | Avg | p50 | p95 | p99 | p99.9 | Max |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for s in &a.series {
            // Each series in its own unit: a num-dist count is not a time.
            let f = |figure: &str| s.unit.format(s.figure(figure));
            md.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                md_code(&s.label),
                s.calls,
                f("min"),
                f("avg"),
                f("p50"),
                f("p95"),
                f("p99"),
                f("p99_9"),
                f("max")
            ));
        }
    }

    /// Top functions, top stacks, categories, phases: the CPU profile.
    fn profile_markdown(&self, md: &mut String) {
        let i = &self.input;
        md.push_str("\n## Top Functions\n\n");
        if self.functions.is_empty() {
            md.push_str("No samples were selected.\n");
        } else {
            md.push_str(
                "| # | Function | Self | Self % | Total | Total % |\n|---:|---|---:|---:|---:|---:|\n",
            );
            for (n, f) in self.functions.iter().take(20).enumerate() {
                md.push_str(&format!(
                    "| {} | `{}` | {} | {:.2} | {} | {:.2} |\n",
                    n + 1,
                    md_code(&f.name),
                    f.self_weight,
                    f.self_percent,
                    f.total_weight,
                    f.total_percent
                ));
            }
        }

        if !self.stacks.is_empty() {
            md.push_str("\n## Top Stacks\n\n");
            md.push_str("| Samples | % | Stack (root first) |\n|---:|---:|---|\n");
            for st in self.stacks.iter().take(10) {
                md.push_str(&format!(
                    "| {} | {:.2} | `{}` |\n",
                    st.weight,
                    st.percent,
                    md_code(&st.stack)
                ));
            }
        }

        if !self.categories.is_empty() {
            md.push_str(
                "\n## Hotspot Categories\n\n| Category | Axis | Samples | Percent |\n|---|---|---:|---:|\n",
            );
            for c in &self.categories {
                md.push_str(&format!(
                    "| {} | {} | {} | {:.2} |\n",
                    c.name, c.axis, c.samples, c.percent
                ));
            }
        }

        if !i.variants.is_empty() {
            md.push_str(
                "\n## Phases and Focus\n\n| Variant | Samples | Folded | Flamegraph |\n|---|---:|---|---|\n",
            );
            for v in &i.variants {
                md.push_str(&format!(
                    "| {} | {} | `{}` | {} |\n",
                    v.name,
                    v.samples,
                    v.folded.display(),
                    v.svg
                        .as_ref()
                        .map_or("-".to_string(), |p| format!("`{}`", p.display()))
                ));
            }
        }
    }

    /// How the addresses were resolved; the guest's regions and alias only for a guest.
    fn resolve_markdown(&self, md: &mut String) {
        let (i, s) = (&self.input, self.input.stats);
        md.push_str("\n## Resolve Statistics\n\n");
        md.push_str(&format!(
            "- selected records {}, bad (unresolved) {}, frames {}, leaf-only {}, multi-frame {}\n",
            s.selected_records,
            s.bad_records,
            s.selected_frames,
            s.selected_leaf_records,
            s.selected_multi_frame_records
        ));
        if !self.guest_notes() {
            md.push_str(&format!(
                "- addresses: {} not covered by any symbol\n",
                i.facts.unknown_frames
            ));
            return;
        }
        md.push_str(&format!(
            "- addresses: {} from physical aliases, {} not covered by any symbol\n",
            i.facts.aliased_frames, i.facts.unknown_frames
        ));
        let outside = &i.facts.outside_kernel;
        md.push_str(&format!(
            "- outside the kernel: {} firmware, {} user ({} named by --user-elf), {} unknown frames; {} return addresses of such samples dropped\n",
            outside.firmware_frames,
            outside.user_frames,
            outside.user_frames_named,
            outside.unknown_frames,
            outside.return_addresses_dropped
        ));
        if let Some(a) = &i.facts.kernel_alias {
            md.push_str(&format!(
                "- kernel physical alias: 0x{:x}-0x{:x} (from the {})\n",
                a.phys_start, a.phys_end, a.source
            ));
        }
    }
}

/// Keep a name readable inside a Markdown code span in a table.
fn md_code(s: &str) -> String {
    // Names come from binaries and session files: control characters spelled out.
    crate::model::text::escape_controls(s)
        .replace('`', "'")
        .replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{Case, with_report};

    #[test]
    fn completeness_says_what_was_lost_or_that_nothing_was() {
        let md = with_report(Case::host(), |r| r.to_markdown());
        assert!(md.contains("## Completeness\n\nNothing was lost"), "{md}");
        let lossy = Case::lossy();
        let md = with_report(lossy, |r| r.to_markdown());
        assert!(md.contains("- result: `incomplete`"), "{md}");
        assert!(
            md.contains("- incomplete: ") && md.contains("lost 5 events"),
            "{md}"
        );
    }

    #[test]
    fn a_host_report_has_no_guest_sections_and_a_guest_report_has_them() {
        let host = with_report(Case::host(), |r| r.to_markdown());
        let guest = with_report(Case::guest(), |r| r.to_markdown());
        for section in [
            "## Workload Metrics",
            "## Fix Candidates",
            "## How perfscope counts",
        ] {
            assert!(!host.contains(section), "{section} in a host report:\n{host}");
            assert!(
                guest.contains(section),
                "{section} missing from a guest report:\n{guest}"
            );
        }
        assert!(host.contains("| 1 | `leaf` | 3 | 75.00 | 3 | 75.00 |"), "{host}");
    }

    #[test]
    fn an_analysis_without_samples_has_no_cpu_sections() {
        let md = with_report(Case::analysis(), |r| r.to_markdown());
        assert!(
            md.contains("- analysis: `syscalls`, 20 events, 1 table rows"),
            "{md}"
        );
        assert!(
            md.contains("## Latency") && md.contains("| `read(0)` | 10 |"),
            "{md}"
        );
        for section in [
            "## Top Functions",
            "## Resolve Statistics",
            "- samples:",
            "- callchain:",
        ] {
            assert!(!md.contains(section), "{section}:\n{md}");
        }
    }

    #[test]
    fn the_analysis_says_which_files_hold_its_offenders_and_heatmap() {
        let md = with_report(Case::analysis_with_offenders(), |r| r.to_markdown());
        assert!(
            md.contains("- --than offenders: 2 pairs, 3 dropped: `out/offenders.txt` (as the offender pane lists them), `out/offenders.json` (one record per pair)\n"),
            "{md}"
        );
        assert!(
            md.contains("- latency heatmap: 2 columns of 500 ns × 3 ranges, 4 counted: `out/heatmap.csv`\n"),
            "{md}"
        );
        let md = with_report(Case::analysis(), |r| r.to_markdown());
        assert!(!md.contains("offenders") && !md.contains("heatmap"), "{md}");
    }

    #[test]
    fn names_cannot_break_the_tables_or_the_terminal() {
        let case = Case {
            stacks: vec![(vec!["main", "a|b`c\u{1b}[31m"], 2)],
            ..Case::host()
        };
        let md = with_report(case, |r| r.to_markdown());
        assert!(!md.contains('\u{1b}'), "{md}");
        assert!(md.contains("a\\|b'c"), "{md}");
    }
}
