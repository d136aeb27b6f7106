//! Samples built in memory as a feed: benchmarks and tests hand a [`SampleList`] to the
//! engine through the same road as any recorded input (tables first, then samples in
//! batches).

use crate::model::sample_list::SampleList;
use crate::model::tables::TableMark;

use super::{Feed, FeedStatus, SessionStart, Update};

/// Samples handed over per poll.
const BATCH: usize = 1 << 16;

/// A [`SampleList`] handed over in batches.
pub struct ListFeed {
    list: SampleList,
    told: TableMark,
    next: usize,
    started: bool,
}

impl ListFeed {
    pub fn new(list: SampleList) -> Self {
        Self {
            list,
            told: TableMark::default(),
            next: 0,
            started: false,
        }
    }
}

/// Every update that hands `list` over at once: its tables, then its samples.
pub fn updates_of(list: &SampleList) -> Vec<Update> {
    let mut tables = list.tables.clone();
    let delta = tables.take_delta(&mut TableMark::default());
    vec![Update::Tables(delta), Update::Samples(list.samples().to_vec())]
}

impl Feed for ListFeed {
    fn poll(&mut self, out: &mut Vec<Update>) -> anyhow::Result<FeedStatus> {
        if !self.started {
            self.started = true;
            out.push(Update::Start(SessionStart {
                label: self.list.tables.info.source.clone(),
                kind: "memory".into(),
                ..SessionStart::default()
            }));
            out.push(Update::Tables(self.list.tables.take_delta(&mut self.told)));
        }
        let samples = self.list.samples();
        let end = (self.next + BATCH).min(samples.len());
        if end > self.next {
            out.push(Update::Samples(samples[self.next..end].to_vec()));
        }
        self.next = end;
        Ok(if self.next == samples.len() {
            FeedStatus::Finished
        } else {
            FeedStatus::Progress
        })
    }
}
