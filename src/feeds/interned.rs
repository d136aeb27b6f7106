//! The feed's side of the interned tables: a feed interns names as it resolves them and
//! hands the engine only what is new, always before the samples that use it.

use crate::model::tables::{ProfileTables, TableMark};
use crate::model::{ProfileInfo, Sample};

use super::Update;

/// Tables a feed interns into, and how far the engine has been told of them.
#[derive(Debug, Default)]
pub struct FeedTables {
    pub tables: ProfileTables,
    told: TableMark,
}

impl FeedTables {
    pub fn new(info: ProfileInfo) -> Self {
        Self {
            tables: ProfileTables::new(info),
            told: TableMark::default(),
        }
    }

    /// Tables interned elsewhere (a session file's), none of them told yet.
    pub fn from_tables(tables: ProfileTables) -> Self {
        Self {
            tables,
            told: TableMark::default(),
        }
    }

    /// The new table entries (if any) as an update.
    pub fn delta(&mut self, out: &mut Vec<Update>) {
        let delta = self.tables.take_delta(&mut self.told);
        if !delta.is_empty() {
            out.push(Update::Tables(delta));
        }
    }

    /// The new table entries, then `samples`.
    pub fn hand_over(&mut self, samples: Vec<Sample>, out: &mut Vec<Update>) {
        self.delta(out);
        if !samples.is_empty() {
            out.push(Update::Samples(samples));
        }
    }
}
