//! perf-prof's live `sql` as model data: the events of a span as table rows (one table
//! per event, perf-prof's columns), which the queries run over when the span is shown —
//! every `-i` interval for the text, the selected window in the TUI. Query results do not
//! add up (a COUNT of two spans is not two COUNT rows), events do: so the rows are the
//! events, and two spans merge by putting their events together.
//!
//! The events a span keeps are bounded ([`MAX_EVENTS`]); beyond it they are counted in
//! [`SqlRows::dropped`] and the text says so.

/// One column value, typed as perf-prof's table declares the column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlValue {
    Null,
    Integer(i64),
    Text(String),
    Blob(Vec<u8>),
}

impl SqlValue {
    fn heap_bytes(&self) -> usize {
        match self {
            SqlValue::Text(s) => s.capacity(),
            SqlValue::Blob(b) => b.capacity(),
            _ => 0,
        }
    }
}

/// Events beyond this many per span (all tables together) are counted, not kept.
pub const MAX_EVENTS: usize = 1_000_000;

/// One span's events, per table (the index of [`SqlSchema::tables`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SqlRows {
    pub tables: Vec<Vec<Vec<SqlValue>>>,
    pub dropped: u64,
}

impl SqlRows {
    pub fn events(&self) -> usize {
        self.tables.iter().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.events() == 0 && self.dropped == 0
    }

    /// Keep one event of `table` (or count it when the span is full).
    pub fn push(&mut self, table: usize, row: Vec<SqlValue>) {
        if self.events() >= MAX_EVENTS {
            self.dropped = self.dropped.saturating_add(1);
            return;
        }
        if self.tables.len() <= table {
            self.tables.resize_with(table + 1, Vec::new);
        }
        self.tables[table].push(row);
    }

    /// Add `other`'s events. Events are not scaled (a decayed COUNT would be a guess):
    /// decay keeps them whole.
    pub fn merge(&mut self, other: &SqlRows) {
        let mut room = MAX_EVENTS.saturating_sub(self.events());
        if self.tables.len() < other.tables.len() {
            self.tables.resize_with(other.tables.len(), Vec::new);
        }
        for (into, from) in self.tables.iter_mut().zip(&other.tables) {
            let taken = from.len().min(room);
            into.extend_from_slice(&from[..taken]);
            room -= taken;
            self.dropped = self.dropped.saturating_add((from.len() - taken) as u64);
        }
        self.dropped = self.dropped.saturating_add(other.dropped);
    }

    pub fn heap_bytes(&self) -> usize {
        self.tables
            .iter()
            .flatten()
            .map(|row| {
                row.capacity() * std::mem::size_of::<SqlValue>()
                    + row.iter().map(SqlValue::heap_bytes).sum::<usize>()
            })
            .sum()
    }
}

/// A column's declared type (perf-prof: strings TEXT, other arrays BLOB, the rest INTEGER).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SqlType {
    Integer,
    Text,
    Blob,
}

impl SqlType {
    pub fn sql(self) -> &'static str {
        match self {
            SqlType::Integer => "INTEGER",
            SqlType::Text => "TEXT",
            SqlType::Blob => "BLOB",
        }
    }
}

/// One event's table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlTable {
    /// The alias, else the event name (`sched_wakeup`).
    pub name: String,
    pub system: String,
    pub event: String,
    pub event_id: u64,
    pub filter: Option<String>,
    pub columns: Vec<(String, SqlType)>,
    /// perf-prof's `field_count`: every column of the table.
    pub field_count: usize,
    /// When the table was made (Unix seconds, perf-prof's `created_time`).
    pub created_unix_s: u64,
}

/// What the rows are and what to ask of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlSchema {
    pub tables: Vec<SqlTable>,
    /// `--query`: `;`-separated statements.
    pub query: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_merge_by_keeping_both_events() {
        let mut a = SqlRows::default();
        a.push(1, vec![SqlValue::Integer(1)]);
        let mut b = SqlRows::default();
        b.push(0, vec![SqlValue::Text("x".into())]);
        b.push(1, vec![SqlValue::Integer(2)]);
        a.merge(&b);
        assert_eq!(a.tables[0], vec![vec![SqlValue::Text("x".into())]]);
        assert_eq!(a.tables[1].len(), 2);
        assert_eq!(a.events(), 3);
        assert_eq!(a.dropped, 0);
    }
}
