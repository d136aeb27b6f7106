//! Hotspot categories: the reference harness's 14 substring rules over whole stacks
//! (`hotspot_categories.csv`, `report.json` `category_totals`).
//!
//! A stack belongs to a category when any pattern is a substring of its normalised frames
//! (lower-case, ANSI and `+0x…` removed, joined by newlines), or when every pattern of one
//! of the rule's groups is. One sample can count in several categories. Folded stacks are
//! merged here, so `matched_stacks` counts distinct stacks (the reference's count is one
//! per sample because its lines are never merged).

use serde_json::{Value, json};

use rustc_hash::FxHashMap;

use crate::model::hotspots::{percent, totals_by_key};

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
///
/// Patterns never contain a newline, so "a pattern is a substring of the frames joined by
/// newlines" is "a pattern is a substring of some frame": each distinct name is matched
/// once, and a node inherits its parent's matches, so a stack is classified in O(1).
pub fn category_totals(view: &ExportView<'_>, top: usize) -> Vec<CategoryTotal> {
    let trie = &view.trie;
    let frames = &view.tables.frames;
    let total = trie.total_weight();

    // Distinct normalised names, and what each one matches on its own.
    let mut names: Vec<String> = Vec::new();
    let mut name_index: FxHashMap<String, u32> = FxHashMap::default();
    let key_of: Vec<u32> = frames
        .ids()
        .map(|f| {
            let n = normalise(frames.name(f));
            *name_index.entry(n.clone()).or_insert_with(|| {
                names.push(n);
                names.len() as u32 - 1
            })
        })
        .collect();
    let group_bits = group_pattern_bits();
    let rule_mask = |name: &str| -> u32 {
        RULES
            .iter()
            .enumerate()
            .filter(|(_, r)| r.any.iter().any(|p| name.contains(p)))
            .fold(0, |m, (i, _)| m | 1 << i)
    };
    let pattern_mask = |name: &str| -> u64 {
        group_bits
            .iter()
            .filter(|(pattern, _)| name.contains(pattern))
            .fold(0, |m, (_, bit)| m | bit)
    };
    let name_rules: Vec<u32> = names.iter().map(|n| rule_mask(n)).collect();
    let name_patterns: Vec<u64> = names.iter().map(|n| pattern_mask(n)).collect();

    // Parents come before children in a trie's ids, so one pass inherits the masks.
    let mut node_rules = vec![0u32; trie.len()];
    let mut node_patterns = vec![0u64; trie.len()];
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
    for id in trie.ids() {
        let node = trie.node(id);
        let (Some(frame), Some(parent)) = (node.frame(), node.parent()) else {
            continue;
        };
        let key = key_of[frame.index()] as usize;
        let rules = node_rules[parent.index()] | name_rules[key];
        let patterns = node_patterns[parent.index()] | name_patterns[key];
        node_rules[id.index()] = rules;
        node_patterns[id.index()] = patterns;
        if node.self_weight == 0 {
            continue;
        }
        for (i, rule) in RULES.iter().enumerate() {
            let by_group = || {
                rule.all_groups.iter().any(|g| {
                    g.iter()
                        .all(|p| group_bits.iter().any(|(q, bit)| q == p && patterns & bit != 0))
                })
            };
            if rules & (1 << i) != 0 || by_group() {
                totals[i].samples += node.self_weight;
                totals[i].matched_stacks += 1;
            }
        }
    }

    // A function that matches a rule itself puts every stack through it in the category.
    let name_totals = totals_by_key(trie, &key_of, names.len());
    for (t, rule) in totals.iter_mut().zip(RULES) {
        t.percent = percent(t.samples, total);
        let mut f: Vec<(String, u64)> = names
            .iter()
            .zip(&name_totals)
            .filter(|(n, w)| **w > 0 && rule.matches(n))
            .map(|(n, w)| (n.clone(), *w))
            .collect();
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

/// One bit per distinct pattern used in an all-of group.
fn group_pattern_bits() -> Vec<(&'static str, u64)> {
    let mut out: Vec<(&'static str, u64)> = Vec::new();
    for rule in RULES {
        for group in rule.all_groups {
            for &p in *group {
                if !out.iter().any(|(q, _)| *q == p) {
                    out.push((p, 1u64 << out.len()));
                }
            }
        }
    }
    out
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
    use crate::model::sample_list::test_support::profile_from;

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
