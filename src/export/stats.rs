//! Resolve statistics (`resolve.stats.json`) and the stack-depth summary
//! (`stack-depth-summary.csv`), computed from the model for one selection.
//!
//! Keys and their order follow the reference analyzer so existing scripts keep working.
//! Where it counts wrongly this counts right:
//! - samples removed by `--focus` are not "selected" (the reference counts them in
//!   `avg_depth`'s denominator);
//! - depth has one definition, the raw trace length (`max(1, addresses)`, what the
//!   unwinder found and what `stack-depth-summary.csv` counts): `max_depth` and `avg_depth`
//!   both measure it (the reference's `avg_depth` divided inline-expanded frames by records,
//!   so it could exceed `max_depth`). The inline-expanded counterparts are `max_frames` and
//!   `avg_frames`;
//! - an idle sample (a halted vCPU, no trace) is selected but has no stack: it counts in
//!   `idle_records`, not in the depths, the leaf records or the failed unwinds.
//!
//! Extra keys come after the reference's.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::model::sample::Callchain;
use crate::model::selection::{Counted, Verdict};
use crate::model::{ProfileTables, SampleMeta, SourceFacts, TimeWindow};

use super::ExportView;

/// The counts behind `resolve.stats.json`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResolveStats {
    pub selected_records: u64,
    pub bad_records: u64,
    pub selected_frames: u64,
    pub selected_leaf_records: u64,
    pub selected_multi_frame_records: u64,
    pub samples_with_pc: u64,
    pub samples_with_sp: u64,
    pub samples_with_fp: u64,
    pub samples_with_cpu: u64,
    pub max_depth: u64,
    /// Sum of the raw depths, for `avg_depth`.
    pub depth_sum: u64,
    /// Most inline-expanded frames in one selected stack.
    pub max_frames: u64,
    /// Selected samples of a halted vCPU (no stack).
    pub idle_records: u64,
    pub callchain_method: Option<String>,
    pub excluded_before: u64,
    pub excluded_after: u64,
    pub excluded_by_focus: u64,
    /// Samples per depth (`max(1, raw trace length)`).
    pub depth_histogram: BTreeMap<u64, u64>,
    pub window_without_timestamps: bool,
}

/// Resolve statistics counted while a selection is classified.
pub struct StatsBuilder<'a> {
    tables: &'a ProfileTables,
    window: TimeWindow,
    stats: ResolveStats,
    frames_per_stack: Vec<Option<u64>>,
    methods: Vec<Callchain>,
    any_untimed: bool,
}

impl<'a> StatsBuilder<'a> {
    pub fn new(tables: &'a ProfileTables, window: &TimeWindow) -> Self {
        Self {
            tables,
            window: *window,
            stats: ResolveStats::default(),
            frames_per_stack: vec![None; tables.stacks.len()],
            methods: Vec::new(),
            any_untimed: false,
        }
    }

    /// Count one classified count.
    pub fn count(&mut self, counted: &Counted, verdict: Verdict) {
        let s = &mut self.stats;
        let w = counted.weight;
        match verdict {
            Verdict::BeforeWindow => s.excluded_before += w,
            Verdict::AfterWindow => s.excluded_after += w,
            Verdict::NoFocusMatch => s.excluded_by_focus += w,
            Verdict::OtherInstance => {}
            Verdict::Selected => {
                self.any_untimed |= !counted.timed;
                let meta = counted.key.meta;
                s.selected_records += w;
                if meta.callchain == Callchain::Idle {
                    s.idle_records += w;
                    return;
                }
                let depth = u64::from(meta.raw_depth.max(1));
                *s.depth_histogram.entry(depth).or_default() += w;
                s.max_depth = s.max_depth.max(depth);
                s.depth_sum = s.depth_sum.saturating_add(depth.saturating_mul(w));
                if depth > 1 {
                    s.selected_multi_frame_records += w;
                } else {
                    s.selected_leaf_records += w;
                }
                let flag = |f| if meta.has(f) { w } else { 0 };
                s.samples_with_pc += flag(SampleMeta::HAS_PC);
                s.samples_with_sp += flag(SampleMeta::HAS_SP);
                s.samples_with_fp += flag(SampleMeta::HAS_FP);
                s.samples_with_cpu += flag(SampleMeta::HAS_CPU);
                if meta.has(SampleMeta::UNRESOLVED) {
                    s.bad_records += w;
                }
                let stack = counted.key.stack;
                let tables = self.tables;
                let n = match self.frames_per_stack.get_mut(stack.index()) {
                    Some(slot) => *slot.get_or_insert_with(|| tables.stack_frames(stack).count() as u64),
                    None => tables.stack_frames(stack).count() as u64,
                };
                s.selected_frames = s.selected_frames.saturating_add(n.saturating_mul(w));
                s.max_frames = s.max_frames.max(n);
                if meta.callchain != Callchain::Unknown && !self.methods.contains(&meta.callchain) {
                    self.methods.push(meta.callchain);
                }
            }
        }
    }

    pub fn finish(mut self) -> ResolveStats {
        self.stats.callchain_method = match self.methods.as_slice() {
            [] => None,
            [one] => Some(one.name().to_string()),
            _ => Some("mixed".to_string()),
        };
        self.stats.window_without_timestamps = !self.window.is_all() && self.any_untimed;
        self.stats
    }
}

impl ResolveStats {
    /// Selected samples with a stack (all but the idle ones).
    pub fn stack_records(&self) -> u64 {
        self.selected_records - self.idle_records
    }

    /// Mean raw trace length, as `max_depth` and the depth histogram count it.
    pub fn avg_depth(&self) -> f64 {
        match self.stack_records() {
            0 => 0.0,
            n => self.depth_sum as f64 / n as f64,
        }
    }

    /// Mean inline-expanded frames per stack, as `max_frames` counts them.
    pub fn avg_frames(&self) -> f64 {
        match self.stack_records() {
            0 => 0.0,
            n => self.selected_frames as f64 / n as f64,
        }
    }

    pub fn callchain_enabled(&self) -> bool {
        self.callchain_method.as_deref().is_some_and(|m| m != "leaf")
    }

    pub fn warning(&self) -> Option<&'static str> {
        self.window_without_timestamps
            .then_some("input has no timestamps; elapsed-time filtering was not applied")
    }

    /// The `callchain` object (also embedded in report.json).
    pub fn callchain_json(&self) -> Value {
        let enabled = self.callchain_enabled();
        json!({
            "enabled": enabled,
            "method": self.callchain_method,
            "samples_with_fp": self.samples_with_fp,
            "unwind_success": self.selected_multi_frame_records,
            "unwind_failed": if enabled { self.stack_records() - self.selected_multi_frame_records } else { 0 },
            "avg_depth": round9(self.avg_depth()),
            "max_depth": self.max_depth,
            "avg_frames": round9(self.avg_frames()),
            "max_frames": self.max_frames,
        })
    }

    /// `resolve.stats.json`, reference keys first, in the reference's order.
    pub fn to_json(&self, facts: &SourceFacts, window: &TimeWindow, view: &ExportView<'_>) -> Value {
        let secs = |ns: Option<u64>| ns.map(|n| round9(n as f64 / 1e9));
        let mut m = Map::new();
        m.insert("format_version".into(), json!(facts.format_version));
        m.insert("raw_records".into(), json!(facts.raw_records));
        m.insert("selected_records".into(), json!(self.selected_records));
        m.insert("bad_records".into(), json!(self.bad_records));
        m.insert("total_frames".into(), json!(facts.total_frames));
        m.insert("selected_frames".into(), json!(self.selected_frames));
        m.insert("selected_leaf_records".into(), json!(self.selected_leaf_records));
        m.insert(
            "selected_multi_frame_records".into(),
            json!(self.selected_multi_frame_records),
        );
        m.insert("samples_with_pc".into(), json!(self.samples_with_pc));
        m.insert("samples_with_sp".into(), json!(self.samples_with_sp));
        m.insert("samples_with_fp".into(), json!(self.samples_with_fp));
        m.insert("samples_with_cpu".into(), json!(self.samples_with_cpu));
        m.insert("max_depth".into(), json!(self.max_depth));
        m.insert("avg_depth".into(), json!(round9(self.avg_depth())));
        m.insert("callchain".into(), self.callchain_json());
        m.insert("samples_excluded_before".into(), json!(self.excluded_before));
        m.insert("samples_excluded_after".into(), json!(self.excluded_after));
        m.insert("first_sample_sec".into(), json!(secs(facts.first_sample_ns)));
        m.insert("last_sample_sec".into(), json!(secs(facts.last_sample_ns)));
        m.insert("start_sec".into(), json!(secs(window.start_ns)));
        m.insert("stop_sec".into(), json!(secs(window.stop_ns)));
        m.insert("warning".into(), json!(self.warning()));
        // perfscope additions.
        m.insert("max_frames".into(), json!(self.max_frames));
        m.insert("avg_frames".into(), json!(round9(self.avg_frames())));
        m.insert("idle_records".into(), json!(self.idle_records));
        m.insert("samples_excluded_by_focus".into(), json!(self.excluded_by_focus));
        m.insert(
            "focus".into(),
            json!(view.selection.focus.as_ref().map(|f| f.pattern().to_string())),
        );
        m.insert(
            "kernel_filter".into(),
            match &facts.kernel_filter {
                Some(k) => json!({
                    "enabled": true,
                    "text_start": format!("0x{:x}", k.text_start),
                    "text_end": format!("0x{:x}", k.text_end),
                    "samples_dropped": k.samples_dropped,
                    "frames_dropped": k.frames_dropped,
                }),
                None => json!({ "enabled": false }),
            },
        );
        m.insert("aliased_frames".into(), json!(facts.aliased_frames));
        m.insert("unknown_frames".into(), json!(facts.unknown_frames));
        let outside = &facts.outside_kernel;
        m.insert(
            "outside_kernel".into(),
            json!({
                "firmware_frames": outside.firmware_frames,
                "user_frames": outside.user_frames,
                "user_frames_named": outside.user_frames_named,
                "unknown_frames": outside.unknown_frames,
                "return_addresses_dropped": outside.return_addresses_dropped,
            }),
        );
        m.insert(
            "kernel_alias".into(),
            match &facts.kernel_alias {
                Some(a) => json!({
                    "phys_start": format!("0x{:x}", a.phys_start),
                    "phys_end": format!("0x{:x}", a.phys_end),
                    "offset": format!("0x{:x}", a.offset),
                    "source": a.source,
                }),
                None => Value::Null,
            },
        );
        m.insert(
            "unwind_stops".into(),
            facts.unwind_stops.map_or(Value::Null, |stops| stops.to_json()),
        );
        m.insert("unique_stacks".into(), json!(leaf_paths(view)));
        m.insert("counting".into(), json!("per_sample"));
        Value::Object(m)
    }

    /// `stack-depth-summary.csv`.
    pub fn depth_csv(&self) -> String {
        let mut out = String::from("depth,samples\n");
        for (depth, n) in &self.depth_histogram {
            out.push_str(&format!("{depth},{n}\n"));
        }
        out
    }
}

/// Distinct call paths with self weight (= folded lines).
fn leaf_paths(view: &ExportView<'_>) -> usize {
    view.trie
        .ids()
        .filter(|&id| view.trie.node(id).self_weight > 0 && view.trie.node(id).frame().is_some())
        .count()
}

/// Round to 9 decimals, as the reference prints its floats.
pub fn round9(x: f64) -> f64 {
    (x * 1e9).round() / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sample_list::test_support::profile_from;
    use crate::model::{Focus, Selection};

    #[test]
    fn counts_follow_window_and_focus() {
        let p = profile_from(&[
            (&["main", "a", "leaf"], 1, Some(1_000_000_000)),
            (&["main", "b"], 1, Some(2_000_000_000)),
            (&["main", "a"], 1, Some(2_500_000_000)),
            (&["main", "b", "c", "d"], 1, Some(3_500_000_000)),
        ]);
        let window = TimeWindow::from_secs(Some(1.5), Some(3.0));
        let view = ExportView::new(
            &p,
            Selection::window(window).with_focus(Some(Focus::new("^a$").unwrap())),
        );
        let s = view.stats.clone();
        assert_eq!(s.excluded_before, 1);
        assert_eq!(s.excluded_after, 1);
        assert_eq!(s.excluded_by_focus, 1);
        assert_eq!(s.selected_records, 1);
        assert_eq!(s.selected_frames, 2);
        assert_eq!(s.avg_depth(), 2.0);
        assert_eq!(s.avg_frames(), 2.0);
        assert_eq!(s.depth_csv(), "depth,samples\n2,1\n");
        let facts = SourceFacts {
            raw_records: 4,
            total_frames: 12,
            ..SourceFacts::default()
        };
        let j = s.to_json(&facts, &window, &view);
        let keys: Vec<&str> = j.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            &keys[..5],
            [
                "format_version",
                "raw_records",
                "selected_records",
                "bad_records",
                "total_frames"
            ]
        );
        assert_eq!(j["start_sec"], json!(1.5));
        assert_eq!(j["stop_sec"], json!(3.0));
        assert_eq!(j["warning"], Value::Null);
        assert_eq!(j["focus"], json!("^a$"));
    }

    /// max_depth and avg_depth count the same thing (raw addresses), so the average never
    /// exceeds the maximum, however many inline frames the addresses expand to; idle
    /// samples have no depth.
    #[test]
    fn depth_is_raw_addresses_for_max_and_avg_and_idle_samples_have_none() {
        use crate::model::sample_list::test_support::profile_with_meta;
        use crate::model::{Callchain, SampleMeta};
        let meta = |raw_depth, callchain| SampleMeta {
            raw_depth,
            flags: 0,
            callchain,
        };
        // Two addresses expanding to five frames (inlines), one of three addresses
        // expanding to three, and two idle samples.
        let p = profile_with_meta(&[
            (
                &["main", "a", "inl1", "inl2", "leaf"],
                1,
                meta(2, Callchain::Dwarf),
            ),
            (&["main", "b", "leaf"], 1, meta(3, Callchain::Dwarf)),
            (&["[idle]"], 2, meta(0, Callchain::Idle)),
        ]);
        let view = ExportView::new(&p, Selection::all());
        let s = view.stats.clone();
        assert_eq!((s.selected_records, s.idle_records, s.stack_records()), (4, 2, 2));
        assert_eq!((s.max_depth, s.avg_depth()), (3, 2.5));
        assert_eq!((s.max_frames, s.avg_frames()), (5, 4.0));
        assert!(s.avg_depth() <= s.max_depth as f64);
        assert_eq!(s.depth_csv(), "depth,samples\n2,1\n3,1\n");
        assert_eq!(s.callchain_method.as_deref(), Some("dwarf"), "idle is no method");
        let j = s.callchain_json();
        assert_eq!(
            (j["unwind_success"].clone(), j["unwind_failed"].clone()),
            (json!(2), json!(0))
        );
    }

    #[test]
    fn a_window_over_untimed_samples_warns() {
        let p = profile_from(&[(&["main"], 2, None)]);
        let view = ExportView::new(&p, Selection::window(TimeWindow::from_secs(Some(1.0), None)));
        let s = view.stats.clone();
        assert_eq!(s.selected_records, 2, "untimed samples are kept");
        assert!(s.warning().is_some());
    }
}
