//! The call tree of [`CallRows`], as perf-prof prints it: roots, each followed by its
//! callees (depth-first), each line indented by its depth.
//!
//! perf-prof keeps one parent per function (the latest caller; a call from elsewhere
//! moves the function). Rows of a span may hold several callers of one function; its
//! parent here is the caller that called it most (ties: the root, then the lowest
//! function), so a span shows the usual path and every function once. A function that
//! calls itself, or one of its ancestors, is marked `R` (perf-prof's recursion mark) and
//! that call is not a tree edge. Siblings and roots are in `-e` order.

use crate::analyzers::multi_trace::{DelayRow, DelayTable, PairNames};
use crate::model::analysis::CallSchema;
use crate::model::call_rows::{CallRows, Caller};
use crate::model::latency_stats::LatencyStats;

/// One line of the call tree.
#[derive(Clone, Debug, PartialEq)]
pub struct CallLine {
    pub function: u32,
    pub name: String,
    pub depth: usize,
    pub recursive: bool,
    /// Entries counted in the span (all callers).
    pub calls: u64,
    /// The function's times (call-delay), when it returned in the span.
    pub stats: Option<LatencyStats>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CallTable {
    pub lines: Vec<CallLine>,
    pub max_depth: usize,
    /// perf-prof's name width: the longest function name, at least 5 (`start`).
    pub name_width: usize,
    /// Entries counted in the span (perf-prof prints nothing for a span without any).
    pub calls: u64,
}

/// The tree of `rows`.
pub fn call_table(schema: &CallSchema, rows: &CallRows) -> CallTable {
    let n = schema.functions.len();
    let mut best: Vec<Option<(Caller, u64)>> = vec![None; n];
    let mut recursive = vec![false; n];
    let mut calls = vec![0u64; n];
    let mut edges: Vec<(&(Caller, u32), &u64)> = rows.edges.iter().collect();
    edges.sort();
    for (&(caller, callee), &count) in edges {
        let Some(slot) = best.get_mut(callee as usize) else {
            continue;
        };
        calls[callee as usize] += count;
        if caller == Caller::Function(callee) {
            continue;
        }
        // Root sorts before every function: ties go to it, then to the lowest caller.
        if slot.is_none_or(|(_, c)| count > c) {
            *slot = Some((caller, count));
        }
    }
    let parent = |f: usize| best[f].map(|(c, _)| c);
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for f in 0..n {
        match parent(f) {
            Some(Caller::Root) => roots.push(f),
            Some(Caller::Function(p)) if (p as usize) < n => children[p as usize].push(f),
            _ => {}
        }
    }
    let mut lines = Vec::new();
    let mut placed = vec![false; n];
    let mut tree_parent: Vec<Option<usize>> = vec![None; n];
    let mut heads: Vec<usize> = roots;
    // Functions only reachable through a cycle (A calls B calls A, no root above): the
    // one of the lowest index heads it, as perf-prof refuses the link closing a cycle.
    loop {
        for &head in &heads {
            walk(
                head,
                0,
                &children,
                &mut placed,
                &mut tree_parent,
                &mut lines,
                &calls,
            );
        }
        match (0..n).find(|&f| !placed[f] && parent(f).is_some()) {
            Some(f) => heads = vec![f],
            None => break,
        }
    }
    // perf-prof marks the caller of a recursive call: one calling itself or an ancestor.
    for &(caller, callee) in rows.edges.keys() {
        let Caller::Function(p) = caller else { continue };
        let mut at = Some(p as usize);
        while let Some(a) = at {
            if a == callee as usize {
                if let Some(r) = recursive.get_mut(p as usize) {
                    *r = true;
                }
                break;
            }
            at = tree_parent.get(a).copied().flatten();
        }
    }
    for line in &mut lines {
        line.name = schema.functions[line.function as usize].clone();
        line.recursive = recursive[line.function as usize];
        line.stats = rows.times.get(&line.function).cloned();
    }
    // Times without a counted entry (`--impl delay`, or entries in an earlier span).
    for (&f, stats) in &rows.times {
        if !placed.get(f as usize).copied().unwrap_or(true) {
            lines.push(CallLine {
                function: f,
                name: schema.functions[f as usize].clone(),
                depth: 0,
                recursive: false,
                calls: 0,
                stats: Some(stats.clone()),
            });
            placed[f as usize] = true;
        }
    }
    CallTable {
        max_depth: lines.iter().map(|l| l.depth).max().unwrap_or(0),
        name_width: schema.functions.iter().map(|f| f.len()).max().unwrap_or(0).max(5),
        calls: calls.iter().sum(),
        lines,
    }
}

fn walk(
    f: usize,
    depth: usize,
    children: &[Vec<usize>],
    placed: &mut [bool],
    tree_parent: &mut [Option<usize>],
    lines: &mut Vec<CallLine>,
    calls: &[u64],
) {
    placed[f] = true;
    lines.push(CallLine {
        function: f as u32,
        name: String::new(),
        depth,
        recursive: false,
        calls: calls[f],
        stats: None,
    });
    for &c in &children[f] {
        // A child already placed closes a cycle: not a tree edge.
        if !placed[c] {
            tree_parent[c] = Some(f);
            walk(c, depth + 1, children, placed, tree_parent, lines, calls);
        }
    }
}

/// `--impl delay`: perf-prof's delay table, one `entry => exit` row per function in `-e`
/// order (nested-trace does not sort it).
pub fn nested_delay_table(schema: &CallSchema, rows: &CallRows, than_ns: Option<u64>) -> DelayTable {
    let mut functions: Vec<&u32> = rows.times.keys().collect();
    functions.sort();
    DelayTable {
        pairs: schema
            .functions
            .iter()
            .zip(&schema.exits)
            .map(|(start, end)| PairNames {
                start: start.clone(),
                end: end.clone(),
            })
            .collect(),
        key_header: None,
        key_width: 3,
        comm_column: false,
        than_ns,
        rows: functions
            .into_iter()
            .map(|&f| DelayRow {
                instance: None,
                pair: f as usize,
                stats: rows.times[&f].clone(),
            })
            .collect(),
    }
}
