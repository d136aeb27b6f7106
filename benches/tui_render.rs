//! Flamegraph drawing over a huge profile: 1,000,000 distinct stacks (depth 8–16 over a
//! few thousand function names, a skewed pick so some frames are wide as in a real
//! profile), laid out and drawn into a 200×50 buffer, unzoomed and zoomed two levels down,
//! plus a regex search with its match coverage (and the first step to a match, which
//! orders the matches). Setup (profile, snapshot, states) stays out
//! of the timed loops.

mod support;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use regex::Regex;

use perfscope::config::Theme;
use perfscope::engine::{Engine, EngineOptions};
use perfscope::feeds::memory::updates_of;
use perfscope::model::aggregate::Wants;
use perfscope::model::sample_list::SampleList;
use perfscope::model::{Instance, NodeId, ProfileInfo, Sample, SampleMeta, Selection};
use perfscope::views::flamegraph::{FlameState, SearchMatches, render_flamegraph};

use support::Rng;

/// `cargo test` runs every bench once in a debug build as a smoke test: keep that fast.
const STACKS: usize = if cfg!(debug_assertions) { 10_000 } else { 1_000_000 };
const FUNCTIONS: usize = 4_000;

/// A deterministic profile of `STACKS` distinct stacks.
fn profile() -> SampleList {
    let names: Vec<String> = (0..FUNCTIONS)
        .map(|i| format!("subsystem_{}::module_{}::function_{i}", i % 17, i % 101))
        .collect();
    // The seed is odd, so `Rng` keeps it as is: the same stacks as before.
    let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
    let mut next = move || rng.next();
    let mut p = SampleList::new(ProfileInfo::default());
    let instance = p.instance(Instance::unknown());
    let mut seen = std::collections::HashSet::with_capacity(STACKS);
    let mut stack: Vec<&str> = Vec::with_capacity(16);
    while seen.len() < STACKS {
        stack.clear();
        stack.push(&names[(next() % 4) as usize]);
        let depth = 8 + (next() % 9) as usize;
        for level in 1..depth {
            // Near the root few functions dominate; deeper, the pick spreads out.
            let spread = (8u64 << (level * 2).min(12)).min(FUNCTIONS as u64);
            let r = next() % spread;
            let skewed = r * r / spread;
            stack.push(&names[skewed as usize]);
        }
        let id = p.intern_named_stack(&stack);
        if seen.insert(id) {
            p.push_sample(Sample {
                time_ns: Some(seen.len() as u64 * 1_000),
                instance,
                weight: 1 + next() % 4,
                stack: id,
                meta: SampleMeta::default(),
            });
        }
    }
    p
}

fn benches(c: &mut Criterion) {
    let p = profile();
    // Through the engine, as the TUI gets it.
    let mut engine = Engine::new(EngineOptions::batch(Selection::all()));
    engine.apply(updates_of(&p));
    engine.finish();
    engine.builder.wants = Wants::ALL;
    let snapshot = engine.snapshot();
    let trie = &*snapshot.trie;
    let frames = &*snapshot.frames;
    let theme = Theme::default();
    eprintln!(
        "profile: {} distinct stacks, {} trie nodes, {} functions",
        p.stacks.len(),
        trie.len(),
        frames.len()
    );
    let area = Rect::new(0, 0, 200, 50);

    let root = FlameState::new();
    // Two levels down the widest path.
    let widest = |n: NodeId| {
        trie.children(n)
            .max_by_key(|&c| trie.node(c).total_weight)
            .expect("children")
    };
    let level2 = widest(widest(NodeId::ROOT));
    let mut zoomed = FlameState::new();
    zoomed.zoom_to(trie, level2);

    let mut group = c.benchmark_group("flamegraph");
    let mut buf = Buffer::empty(area);
    group.bench_function("render_200x50", |b| {
        b.iter(|| {
            render_flamegraph(trie, frames, &root, area, &mut buf, &theme);
            black_box(&buf);
        })
    });
    group.bench_function("render_200x50_zoomed", |b| {
        b.iter(|| {
            render_flamegraph(trie, frames, &zoomed, area, &mut buf, &theme);
            black_box(&buf);
        })
    });
    let regex = Regex::new("function_1[0-9]$").expect("regex");
    let probe = SearchMatches::new(regex.clone(), trie, frames);
    eprintln!(
        "search /{}/: {} matching nodes, match {:.1}%",
        regex.as_str(),
        probe.count(),
        probe.percent()
    );
    group.bench_function("search", |b| {
        b.iter(|| {
            let s = SearchMatches::new(regex.clone(), trie, frames);
            black_box(s.percent())
        })
    });
    // The first `n` orders the matches by (depth, x); later steps are O(1).
    group.bench_function("search_first_step", |b| {
        b.iter(|| {
            let mut s = SearchMatches::new(regex.clone(), trie, frames);
            black_box(s.step(true, NodeId::ROOT, trie, frames))
        })
    });
    group.finish();
}

criterion_group!(flame, benches);
criterion_main!(flame);
