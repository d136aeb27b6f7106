//! Hotspot categories: the reference harness's 14 substring rules over whole stacks
//! (`hotspot_categories.csv`, `report.json` `category_totals`).
//!
//! A stack belongs to a category when any pattern is a substring of its normalised frames
//! (lower-case, ANSI and `+0x…` removed, joined by newlines), or when every pattern of one
//! of the rule's groups is. One sample can count in several categories. Folded stacks are
//! merged here, so `matched_stacks` counts distinct stacks (the reference's count is one
//! per sample because its lines are never merged).

use serde_json::{Value, json};

use crate::model::NodeId;
use crate::model::hotspots::percent;

use super::ExportView;
use super::hotspots_csv::json_quote;
use super::tables::round4;

/// One rule.
pub struct CategoryRule {
    pub name: &'static str,
    pub axis: &'static str,
    pub any: &'static [&'static str],
    pub all_groups: &'static [&'static [&'static str]],
}

pub const RULES: &[CategoryRule] = &[
    rule(
        "virtqueue_add_notify_wait_pop",
        "bottleneck",
        &["add_notify_wait_pop", "notify_wait_pop"],
        &[],
    ),
    rule(
        "virtqueue_add",
        "bottleneck",
        &["virtqueue::add", "add_buf", "receive_begin", "transmit_begin"],
        &[],
    ),
    rule(
        "virtqueue_pop_complete",
        "bottleneck",
        &[
            "pop_used",
            "poll_used",
            "receive_complete",
            "transmit_complete",
            "complete",
        ],
        &[],
    ),
    rule(
        "virtio_notify_kick",
        "bottleneck",
        &["notify", "kick", "should_notify", "queue_notify"],
        &[],
    ),
    rule(
        "memcpy",
        "bottleneck",
        &[
            "memcpy",
            "copy_nonoverlapping",
            "copy_from_slice",
            "extend_from_slice",
        ],
        &[],
    ),
    rule("memmove", "bottleneck", &["memmove", "copy_within"], &[]),
    rule(
        "allocator",
        "bottleneck",
        &[
            "ax_alloc",
            "global_allocator",
            "__rust_alloc",
            "__rust_dealloc",
            "alloc_pages",
            "dealloc_pages",
            "raw_vec",
            "with_capacity",
        ],
        &[],
    ),
    rule(
        "scheduler_wait_preempt",
        "bottleneck",
        &[
            "ax_task",
            "axtask",
            "run_queue",
            "yield_current",
            "resched",
            "waitqueue",
            "preempt",
            "schedule",
        ],
        &[],
    ),
    rule(
        "lock_mutex_wait",
        "bottleneck",
        &[
            "mutex",
            "rwlock",
            "spinnoirq",
            "spinraw",
            "kspin",
            "lock_api",
            "try_lock",
            "kernel_guard",
            "irqsave",
        ],
        &[],
    ),
    rule(
        "pci_probe_transport",
        "subsystem",
        &[
            "probe_pci",
            "take_virtio_transport",
            "virtio_pci::init",
            "virtio_pci::probe",
            "pciaddress",
            "read_config",
            "write_config",
            "config_space",
            "bar_info",
            "probe_bar",
        ],
        &[],
    ),
    rule(
        "net_inflight_btree",
        "subsystem",
        &["tx_inflight", "rx_inflight"],
        &[
            &["btree", "ax_driver::virtio::net"],
            &["btree", "virtionet"],
            &["btree", "virtio_net"],
        ],
    ),
    rule(
        "block_io_path",
        "subsystem",
        &[
            "virtio_blk",
            "virtioblk",
            "rd_block",
            "blockqueue",
            "read_blocks",
            "write_blocks",
            "rsext4",
            "axfs",
        ],
        &[],
    ),
    rule(
        "net_rx_tx_path",
        "subsystem",
        &[
            "virtio_net",
            "virtionet",
            "axnet",
            "smoltcp",
            "rxqueue",
            "txqueue",
            "transmit",
            "receive",
        ],
        &[],
    ),
    rule(
        "vsock_tx_rx_path",
        "subsystem",
        &["vsock", "virtiosocket", "rdif_vsock"],
        &[],
    ),
];

const fn rule(
    name: &'static str,
    axis: &'static str,
    any: &'static [&'static str],
    all_groups: &'static [&'static [&'static str]],
) -> CategoryRule {
    CategoryRule {
        name,
        axis,
        any,
        all_groups,
    }
}

impl CategoryRule {
    fn matches(&self, text: &str) -> bool {
        self.any.iter().any(|p| text.contains(p))
            || self.all_groups.iter().any(|g| g.iter().all(|p| text.contains(p)))
    }
}

/// One category's totals.
#[derive(Clone, Debug, PartialEq)]
pub struct CategoryTotal {
    pub name: &'static str,
    pub axis: &'static str,
    pub samples: u64,
    pub percent: f64,
    pub matched_stacks: u64,
    /// Frames that match the rule themselves, by samples through them (once per sample).
    pub top_functions: Vec<(String, u64, f64)>,
}

/// Lower-case, strip ANSI escapes and a `+0x…` offset suffix.
pub fn normalise(frame: &str) -> String {
    let mut out = String::with_capacity(frame.len());
    let mut chars = frame.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ … final byte in @..~
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        out.extend(c.to_lowercase());
    }
    if let Some(i) = out.rfind("+0x")
        && out[i + 3..].chars().all(|c| c.is_ascii_hexdigit())
    {
        out.truncate(i);
    }
    out
}

/// Totals for every rule, sorted by samples (descending) then name.
pub fn category_totals(view: &ExportView<'_>, top: usize) -> Vec<CategoryTotal> {
    let trie = &view.trie;
    let frames = &view.profile.frames;
    let total = trie.total_weight();
    let mut totals: Vec<CategoryTotal> = RULES
        .iter()
        .map(|r| CategoryTotal {
            name: r.name,
            axis: r.axis,
            samples: 0,
            percent: 0.0,
            matched_stacks: 0,
            top_functions: Vec::new(),
        })
        .collect();
    let mut functions: Vec<Vec<(String, u64)>> = vec![Vec::new(); RULES.len()];
    for id in trie.ids().filter(|&id| id != NodeId::ROOT) {
        let weight = trie.node(id).self_weight;
        if weight == 0 {
            continue;
        }
        let mut names: Vec<String> = trie
            .path(id)
            .into_iter()
            .map(|f| normalise(frames.name(f)))
            .collect();
        let text = names.join("\n");
        names.sort();
        names.dedup();
        for (i, rule) in RULES.iter().enumerate() {
            if !rule.matches(&text) {
                continue;
            }
            totals[i].samples += weight;
            totals[i].matched_stacks += 1;
            for name in names.iter().filter(|n| rule.matches(n)) {
                match functions[i].iter_mut().find(|(n, _)| n == name) {
                    Some((_, w)) => *w += weight,
                    None => functions[i].push((name.clone(), weight)),
                }
            }
        }
    }
    for (t, mut f) in totals.iter_mut().zip(functions) {
        t.percent = percent(t.samples, total);
        f.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        t.top_functions = f
            .into_iter()
            .take(top.min(10))
            .map(|(n, w)| (n, w, percent(w, total)))
            .collect();
    }
    totals.sort_by(|a, b| b.samples.cmp(&a.samples).then_with(|| a.name.cmp(b.name)));
    totals
}

pub const CSV_HEADER: &str = "category,axis,mode,samples,percent,matched_stacks,top_function";

/// `hotspot_categories.csv`.
pub fn render_csv(totals: &[CategoryTotal]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for t in totals {
        let top = t.top_functions.first().map(|f| f.0.as_str()).unwrap_or("");
        out.push_str(&format!(
            "{},{},{},{},{},{},{}\n",
            json_quote(t.name),
            json_quote(t.axis),
            json_quote("inclusive_stack"),
            t.samples,
            round4(t.percent),
            t.matched_stacks,
            json_quote(top)
        ));
    }
    out
}

/// The `category_totals` array of report.json.
pub fn to_json(totals: &[CategoryTotal]) -> Value {
    Value::Array(
        totals
            .iter()
            .map(|t| {
                json!({
                    "category": t.name,
                    "axis": t.axis,
                    "mode": "inclusive_stack",
                    "samples": t.samples,
                    "percent": round4(t.percent),
                    "matched_stacks": t.matched_stacks,
                    "top_functions": t.top_functions.iter().map(|(n, w, p)| json!({
                        "function": n, "samples": w, "percent": round4(*p)
                    })).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Selection;
    use crate::model::profile::test_support::profile_from;

    #[test]
    fn normalising_strips_colour_case_and_offsets() {
        assert_eq!(normalise("\u{1b}[31mCore::Memcpy+0x1f\u{1b}[0m"), "core::memcpy");
        assert_eq!(normalise("a+0xzz"), "a+0xzz");
    }

    #[test]
    fn stacks_count_once_per_category() {
        let p = profile_from(&[
            (&["main", "axfs::read", "memcpy"], 3, None),
            (&["main", "btree_insert", "virtio_net::poll"], 1, None),
            (&["main", "idle"], 6, None),
        ]);
        let view = ExportView::new(&p, Selection::all());
        let totals = category_totals(&view, 80);
        assert_eq!(totals.len(), 14);
        let get = |n: &str| totals.iter().find(|t| t.name == n).unwrap();
        assert_eq!(get("memcpy").samples, 3);
        assert_eq!(get("memcpy").top_functions[0], ("memcpy".to_string(), 3, 30.0));
        assert_eq!(get("block_io_path").samples, 3);
        assert_eq!(get("net_inflight_btree").samples, 1, "all-pattern group");
        assert_eq!(get("net_rx_tx_path").samples, 1);
        assert_eq!(get("vsock_tx_rx_path").samples, 0);
        assert_eq!(totals[0].samples, 3);
        let csv = render_csv(&totals);
        assert!(csv.starts_with(CSV_HEADER));
        assert!(
            csv.contains("\"memcpy\",\"bottleneck\",\"inclusive_stack\",3,30,1,\"memcpy\""),
            "{csv}"
        );
    }
}
