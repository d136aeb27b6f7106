//! kmemleak's and kmemprof's rows as a view table: one line per stack with its bytes and
//! objects (sortable), the stack named leaf first on the line, as the text lists them.

use crate::model::analysis::{AnalysisInfo, AnalysisRows, AnalysisSchema};
use crate::model::memory_stacks::{AllocPair, MemCell, NamedStack, ProfBlock, sorted_stacks};
use crate::model::present::{AnalysisTable, Cell, Column, ColumnKind, TableRow};

/// Frames shown on a line (the text output has them all).
const FRAMES_SHOWN: usize = 8;

/// A stack on one line: function names leaf first, ` <- ` between them (hrtimer's
/// kept periods show theirs so too).
pub fn stack_line(stack: &NamedStack) -> String {
    if stack.id == 0 {
        return "(no stack: add `stack` to the event, or -g)".into();
    }
    let names: Vec<&str> = stack
        .frames
        .iter()
        .take(FRAMES_SHOWN)
        .map(|f| f.text.split(['+', ' ']).next().unwrap_or(&f.text))
        .collect();
    let more = stack.frames.len().saturating_sub(FRAMES_SHOWN);
    let mut line = names.join(" <- ");
    if more > 0 {
        line.push_str(&format!(" <- … {more} more"));
    }
    line
}

fn row(kind: &str, cell: MemCell, stack: &NamedStack) -> TableRow {
    let stack = stack_line(stack);
    TableRow {
        text: format!(
            "{kind:<10} {:>12} B {:>8} objects  {stack}",
            cell.bytes, cell.objects
        ),
        cells: vec![
            Cell::Text(kind.to_string()),
            Cell::Int(i128::from(cell.bytes)),
            Cell::Int(i128::from(cell.objects)),
            Cell::Text(stack),
        ],
    }
}

/// The table of a kmemleak or kmemprof analysis; `None` for the other analyzers.
pub fn memory_table(info: &AnalysisInfo, rows: &AnalysisRows) -> Option<AnalysisTable> {
    let columns = vec![
        Column::new("what", ColumnKind::Text),
        Column::new("bytes", ColumnKind::Bytes),
        Column::new("objects", ColumnKind::Count),
        Column::new("stack", ColumnKind::Text),
    ];
    match (&info.schema, rows) {
        (AnalysisSchema::Leaks(_), AnalysisRows::Leaks(leaks)) => {
            let live = leaks.live();
            let rows = sorted_stacks(&leaks.stacks)
                .into_iter()
                .filter(|(_, c)| c.objects > 0)
                .map(|(stack, cell)| row("leak", cell, stack))
                .collect();
            Some(AnalysisTable {
                title: format!(
                    "kmemleak: {} bytes in {} objects not freed — {} allocs, {} frees",
                    live.bytes, live.objects, leaks.allocs, leaks.frees
                ),
                header: Vec::new(),
                columns,
                rows,
            })
        }
        (AnalysisSchema::MemProf(schema), AnalysisRows::MemProf(prof)) => {
            let name = |i: u16| schema.events.get(usize::from(i)).cloned().unwrap_or_default();
            let mut table_rows = Vec::new();
            let empty = ProfBlock::default();
            for (alloc, free) in schema.pairs() {
                let block = prof
                    .blocks
                    .get(&AllocPair {
                        alloc,
                        free: Some(free),
                    })
                    .unwrap_or(&empty);
                for (stack, cell) in sorted_stacks(&block.alloc) {
                    table_rows.push(row(&format!("alloc {}", name(alloc)), cell, stack));
                }
                for (stack, cell) in sorted_stacks(&block.free) {
                    table_rows.push(row(&format!("free {}", name(free)), cell, stack));
                }
            }
            let mut unfreed = MemCell::default();
            for (pair, block) in &prof.blocks {
                if pair.free.is_none() {
                    unfreed.add(block.allocated);
                    for (stack, cell) in sorted_stacks(&block.alloc) {
                        table_rows.push(row("not freed", cell, stack));
                    }
                }
            }
            let freed: i64 = prof.blocks.values().map(|b| b.freed.bytes).sum();
            Some(AnalysisTable {
                title: format!(
                    "kmemprof: {freed} bytes allocated and freed, {} bytes not freed",
                    unfreed.bytes
                ),
                header: Vec::new(),
                columns,
                rows: table_rows,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::model::memory_stacks::{FrameText, LeakRows, MemSchema};

    #[test]
    fn leaks_list_live_stacks_by_bytes_with_their_functions() {
        let stack = |id: u32, names: &[&str]| {
            Arc::new(NamedStack {
                id,
                frames: names
                    .iter()
                    .map(|n| FrameText {
                        address: 1,
                        text: format!("{n}+0x10 ([kernel.kallsyms])"),
                    })
                    .collect(),
            })
        };
        let mut rows = LeakRows {
            allocs: 5,
            frees: 2,
            ..LeakRows::default()
        };
        rows.stacks
            .insert(stack(1, &["kmalloc", "small"]), MemCell { bytes: 8, objects: 1 });
        rows.stacks.insert(
            stack(2, &["kmalloc", "alloc_pipe_info"]),
            MemCell {
                bytes: 2048,
                objects: 2,
            },
        );
        // More freed than allocated in this selection: not a leak.
        rows.stacks.insert(
            stack(3, &["kmalloc", "gone"]),
            MemCell {
                bytes: -64,
                objects: -1,
            },
        );
        let info = AnalysisInfo {
            name: "kmemleak".into(),
            schema: AnalysisSchema::Leaks(MemSchema {
                events: vec!["kmem:kmalloc".into(), "kmem:kfree".into()],
                is_alloc: vec![true, false],
                sized: true,
                than_ns: None,
            }),
        };
        let table = memory_table(&info, &AnalysisRows::Leaks(rows)).unwrap();
        assert_eq!(
            table.title,
            "kmemleak: 1992 bytes in 2 objects not freed — 5 allocs, 2 frees"
        );
        let stacks: Vec<&Cell> = table.rows.iter().map(|r| &r.cells[3]).collect();
        assert_eq!(
            stacks,
            [
                &Cell::Text("kmalloc <- alloc_pipe_info".into()),
                &Cell::Text("kmalloc <- small".into())
            ]
        );
        assert_eq!(table.rows[0].cells[1], Cell::Int(2048));
    }
}
