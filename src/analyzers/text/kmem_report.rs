//! kmemleak's and kmemprof's text as perf-prof prints it.
//!
//! kmemleak, once at the end: `<prefix>` then `KMEMLEAK STATS:` / `TOTAL alloc N free M`;
//! then with `size=` on every alloc event `LEAKED BYTES REPORT:` and per allocation stack,
//! most bytes first, `Leak of B bytes in N objects allocated from:` and the stack, one
//! `    %016x name+0xoff (module)` line per frame, leaf first. Without `size=` perf-prof
//! prints `KMEMLEAK REPORT: N` and every live allocation's raw event; here the count is
//! followed by the same per-stack groups (`N objects allocated from:`).
//!
//! kmemprof, per interval: per alloc event, `<prefix>` and `A total alloc B bytes on N
//! objects but not freed` (when some were not) with its stacks, then per (alloc, free)
//! pair `A => F`, `A total alloc …` with `Allocate B (p%) bytes on N (p%) objects:` per
//! stack, and `F total free …` with `Free …` per free stack — the first 10 stacks each,
//! then `Skipping alloc numbered 11..N`.

use std::fmt::Write;

use rustc_hash::FxHashMap;

use super::WallClock;
use crate::model::memory_stacks::{
    AllocPair, LeakRows, MemCell, MemSchema, NamedStack, ProfBlock, ProfRows, StackRef, sorted_stacks,
};
use crate::model::text::escape_controls;

/// perf-prof's `first_n`: stacks printed per list.
const FIRST_N: usize = 10;

/// One stack, a frame a line, as perf-prof's `print_callchain_common`.
pub fn stack_text(stack: &NamedStack) -> String {
    let mut out = String::new();
    for frame in &stack.frames {
        let _ = writeln!(out, "    {:016x} {}", frame.address, escape_controls(&frame.text));
    }
    out
}

/// kmemleak's report of `rows` (the whole run's).
pub fn kmemleak_report(schema: &MemSchema, rows: &LeakRows, wall: &WallClock) -> String {
    let mut out = String::new();
    if rows.allocs == 0 {
        return out;
    }
    let _ = write!(
        out,
        "{}\nKMEMLEAK STATS:\nTOTAL alloc {} free {}\n\n",
        wall.prefix(),
        rows.allocs,
        rows.frees
    );
    let live: Vec<(&StackRef, MemCell)> = sorted_stacks(&rows.stacks)
        .into_iter()
        .filter(|(_, c)| c.objects > 0)
        .collect();
    if live.is_empty() {
        return out;
    }
    if schema.sized {
        out.push_str("LEAKED BYTES REPORT:\n");
        for (stack, cell) in live {
            // perf-prof leaves allocations without a callchain out of the byte report.
            if stack.id == 0 {
                continue;
            }
            let _ = writeln!(
                out,
                "Leak of {} bytes in {} objects allocated from:",
                cell.bytes, cell.objects
            );
            out.push_str(&stack_text(stack));
        }
    } else {
        let total: i64 = live.iter().map(|(_, c)| c.objects).sum();
        let _ = writeln!(out, "KMEMLEAK REPORT: {total}");
        for (stack, cell) in live {
            let _ = writeln!(out, "{} objects allocated from:", cell.objects);
            out.push_str(&stack_text(stack));
        }
    }
    out
}

fn percent(part: i64, whole: i64) -> f64 {
    part as f64 * 100.0 / whole as f64
}

/// The first [`FIRST_N`] stacks of a list, then the skipped count.
fn stack_list(
    out: &mut String,
    verb: &str,
    cells: &FxHashMap<StackRef, MemCell>,
    whole: MemCell,
    what: &str,
) {
    let sorted = sorted_stacks(cells);
    for (stack, cell) in sorted.iter().take(FIRST_N) {
        let _ = writeln!(
            out,
            "{verb} {} ({:.1}%) bytes on {} ({:.1}%) objects:",
            cell.bytes,
            percent(cell.bytes, whole.bytes),
            cell.objects,
            percent(cell.objects, whole.objects)
        );
        out.push_str(&stack_text(stack));
    }
    if sorted.len() > FIRST_N {
        let _ = writeln!(out, "Skipping {what} numbered {}..{}", FIRST_N + 1, sorted.len());
    }
}

/// kmemprof's blocks for one interval's `rows`. `pairs`: every (alloc, free) pair of the
/// session in perf-prof's order (a pair's block prints even when nothing was freed).
pub fn kmemprof_report(schema: &MemSchema, rows: &ProfRows, wall: &WallClock) -> String {
    let pairs = schema.pairs();
    let name = |i: u16| schema.events.get(usize::from(i)).cloned().unwrap_or_default();
    let empty = ProfBlock::default();
    let mut out = String::new();
    let mut allocs: Vec<u16> = pairs.iter().map(|p| p.0).collect();
    allocs.dedup();
    for alloc in allocs {
        if let Some(unfreed) = rows.blocks.get(&AllocPair { alloc, free: None })
            && unfreed.allocated.objects > 0
        {
            let _ = writeln!(
                out,
                "{}\n{} total alloc {} bytes on {} objects but not freed",
                wall.prefix(),
                name(alloc),
                unfreed.allocated.bytes,
                unfreed.allocated.objects
            );
            stack_list(&mut out, "Allocate", &unfreed.alloc, unfreed.allocated, "alloc");
            out.push('\n');
        }
        for &(_, free) in pairs.iter().filter(|p| p.0 == alloc) {
            let block = rows
                .blocks
                .get(&AllocPair {
                    alloc,
                    free: Some(free),
                })
                .unwrap_or(&empty);
            let _ = writeln!(out, "{}\n{} => {}", wall.prefix(), name(alloc), name(free));
            let _ = writeln!(
                out,
                "{} total alloc {} bytes on {} objects",
                name(alloc),
                block.allocated.bytes,
                block.allocated.objects
            );
            stack_list(&mut out, "Allocate", &block.alloc, block.allocated, "alloc");
            let _ = writeln!(
                out,
                "{} total free {} bytes on {} objects",
                name(free),
                block.freed.bytes,
                block.freed.objects
            );
            stack_list(&mut out, "Free", &block.free, block.freed, "free");
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;
    use crate::model::memory_stacks::FrameText;

    fn wall() -> WallClock {
        WallClock::local(UNIX_EPOCH + Duration::from_secs(1_000_000))
    }

    fn stack(id: u32, names: &[(u64, &str)]) -> StackRef {
        Arc::new(NamedStack {
            id,
            frames: names
                .iter()
                .map(|&(address, text)| FrameText {
                    address,
                    text: text.into(),
                })
                .collect(),
        })
    }

    #[test]
    fn kmemleak_prints_stats_then_leaks_by_bytes() {
        let schema = MemSchema {
            events: vec!["kmem:kmalloc".into(), "kmem:kfree".into()],
            is_alloc: vec![true, false],
            sized: true,
            than_ns: None,
        };
        let mut rows = LeakRows {
            allocs: 10,
            frees: 7,
            ..LeakRows::default()
        };
        let pipe = stack(
            1,
            &[(0xffffffff81234567, "__kmalloc_noprof+0x1a ([kernel.kallsyms])")],
        );
        let small = stack(2, &[(0xffffffff81000010, "kstrdup+0x20 ([kernel.kallsyms])")]);
        rows.stacks.insert(
            pipe,
            MemCell {
                bytes: 1024,
                objects: 2,
            },
        );
        rows.stacks.insert(
            small,
            MemCell {
                bytes: 32,
                objects: 1,
            },
        );
        let prefix = wall().prefix();
        assert_eq!(
            kmemleak_report(&schema, &rows, &wall()),
            format!(
                "{prefix}\nKMEMLEAK STATS:\nTOTAL alloc 10 free 7\n\n\
                 LEAKED BYTES REPORT:\n\
                 Leak of 1024 bytes in 2 objects allocated from:\n\
                 \x20   ffffffff81234567 __kmalloc_noprof+0x1a ([kernel.kallsyms])\n\
                 Leak of 32 bytes in 1 objects allocated from:\n\
                 \x20   ffffffff81000010 kstrdup+0x20 ([kernel.kallsyms])\n"
            )
        );
    }

    #[test]
    fn kmemprof_prints_unfreed_then_each_pair() {
        let schema = MemSchema {
            events: vec!["kmem:kmalloc".into(), "kmem:kfree".into()],
            is_alloc: vec![true, false],
            sized: true,
            than_ns: None,
        };
        let mut rows = ProfRows::default();
        let a = stack(1, &[(0x10, "a+0x1 (m)")]);
        let f = stack(2, &[(0x20, "f+0x2 (m)")]);
        let block = rows
            .blocks
            .entry(AllocPair {
                alloc: 0,
                free: Some(1),
            })
            .or_default();
        block.allocated = MemCell {
            bytes: 300,
            objects: 4,
        };
        block.freed = block.allocated;
        block.alloc.insert(
            a.clone(),
            MemCell {
                bytes: 300,
                objects: 4,
            },
        );
        block.free.insert(
            f,
            MemCell {
                bytes: 150,
                objects: 1,
            },
        );
        let unfreed = rows.blocks.entry(AllocPair { alloc: 0, free: None }).or_default();
        unfreed.allocated = MemCell {
            bytes: 64,
            objects: 1,
        };
        unfreed.alloc.insert(
            a,
            MemCell {
                bytes: 64,
                objects: 1,
            },
        );
        let p = wall().prefix();
        assert_eq!(
            kmemprof_report(&schema, &rows, &wall()),
            format!(
                "{p}\nkmem:kmalloc total alloc 64 bytes on 1 objects but not freed\n\
                 Allocate 64 (100.0%) bytes on 1 (100.0%) objects:\n\
                 \x20   0000000000000010 a+0x1 (m)\n\n\
                 {p}\nkmem:kmalloc => kmem:kfree\n\
                 kmem:kmalloc total alloc 300 bytes on 4 objects\n\
                 Allocate 300 (100.0%) bytes on 4 (100.0%) objects:\n\
                 \x20   0000000000000010 a+0x1 (m)\n\
                 kmem:kfree total free 300 bytes on 4 objects\n\
                 Free 150 (50.0%) bytes on 1 (25.0%) objects:\n\
                 \x20   0000000000000020 f+0x2 (m)\n\n"
            )
        );
    }
}
