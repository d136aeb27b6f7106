//! Read a session file back into model types: the profile (same instances, frames,
//! stacks, samples and timestamps as recorded), the console log, markers, event types and
//! events, symbols, lost counts and meta.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::error::{SqliteContext, StoreError};
use super::layout_json::layout_from_json;
use super::schema;
use crate::model::sample_list::SampleList;
use crate::model::{
    ConsoleLog, FrameKind, FrameOrigin, Instance, InstanceId, Line, Location, LocationId, PhaseMarkers,
    ProfileInfo, Sample, StackId,
};
use crate::trace::event::{EventIndex, EventLayout, OwnedTraceEvent};

/// An event type as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedEventType {
    pub index: EventIndex,
    pub alias: Option<String>,
    pub filter: Option<String>,
    pub layout: EventLayout,
}

impl RecordedEventType {
    /// The name a table or view of this type goes by: the alias, else the event name.
    pub fn table_name(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.layout.name)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkerRecord {
    pub time_ns: Option<u64>,
    pub kind: String,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolRecord {
    pub module: String,
    pub address: u64,
    pub name: String,
    pub offset: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LostRecord {
    pub time_ns: Option<u64>,
    pub cpu: Option<u32>,
    pub count: u64,
}

/// Everything a session file holds, as model types.
pub struct RecordedSession {
    pub path: PathBuf,
    pub meta: BTreeMap<String, String>,
    /// The recorded samples with their tables.
    pub profile: SampleList,
    pub console: ConsoleLog,
    pub markers: Vec<MarkerRecord>,
    pub event_types: Vec<RecordedEventType>,
    /// In recording order.
    pub events: Vec<OwnedTraceEvent>,
    pub symbols: Vec<SymbolRecord>,
    pub lost: Vec<LostRecord>,
}

impl RecordedSession {
    /// The first `start` and last `stop` marker, as the workload window.
    pub fn phase_markers(&self) -> PhaseMarkers {
        let mut m = PhaseMarkers::default();
        for marker in &self.markers {
            match marker.kind.as_str() {
                "start" if m.start_ns.is_none() => m.start_ns = marker.time_ns,
                "stop" => m.stop_ns = marker.time_ns,
                _ => {}
            }
        }
        m
    }

    /// Lost records in all.
    pub fn lost_total(&self) -> u64 {
        self.lost.iter().map(|l| l.count).sum()
    }

    pub fn event_type(&self, index: EventIndex) -> Option<&RecordedEventType> {
        self.event_types.iter().find(|t| t.index == index)
    }
}

fn u64_of(v: Option<i64>) -> Option<u64> {
    v.map(|v| v as u64)
}

/// Open and read a whole session.
pub fn open_session(path: &Path) -> Result<RecordedSession, StoreError> {
    let conn = schema::open_read_only(path)?;
    let q = |what: &'static str| move || format!("{}: cannot read {what}", path.display());
    let corrupt = |what: &'static str, reason: String| StoreError::Corrupt {
        path: path.into(),
        what,
        reason,
    };

    let meta: BTreeMap<String, String> = collect(&conn, "SELECT key, value FROM meta", |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
    .ctx(q("meta"))?
    .into_iter()
    .collect();

    let mut profile = SampleList::new(ProfileInfo {
        source: meta
            .get("profile.source")
            .cloned()
            .unwrap_or_else(|| path.display().to_string()),
        arch: meta.get("arch").cloned(),
        binary: meta.get("profile.binary").cloned(),
        frequency_hz: meta.get("profile.frequency_hz").and_then(|v| v.parse().ok()),
    });

    // Instances, frames and stacks map from session ids to profile ids by position.
    let mut instance_ids: BTreeMap<i64, InstanceId> = BTreeMap::new();
    for (id, kind, ext_id, label) in collect(
        &conn,
        "SELECT id, kind, ext_id, label FROM instances ORDER BY id",
        |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get(3)?,
            ))
        },
    )
    .ctx(q("instances"))?
    {
        let kind = schema::instance_kind_from_name(&kind)
            .ok_or_else(|| corrupt("instances", format!("unknown kind `{kind}`")))?;
        let instance = profile.instance(Instance {
            kind,
            id: ext_id as u64,
            label,
        });
        instance_ids.insert(id, instance);
    }

    let mut locations: BTreeMap<i64, LocationId> = BTreeMap::new();
    // Sessions written before frames had a kind lack the column: NULL for them.
    let has_kind = collect(&conn, "SELECT name FROM pragma_table_info('frames')", |r| {
        r.get::<_, String>(0)
    })
    .ctx(q("frames"))?
    .iter()
    .any(|c| c == "kind");
    let frames_sql = if has_kind {
        "SELECT id, name, file, module, kind FROM frames ORDER BY id"
    } else {
        "SELECT id, name, file, module, NULL FROM frames ORDER BY id"
    };
    for (id, name, file, module, kind) in collect(&conn, frames_sql, |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, Option<String>>(4)?,
        ))
    })
    .ctx(q("frames"))?
    {
        let kind = kind.as_deref().map_or(FrameKind::Unknown, FrameKind::from_name);
        let origin = FrameOrigin::new(kind, module.as_deref());
        let frame = profile.frames.intern_from(&name, file.as_deref(), origin);
        let loc = profile.locations.intern(Location {
            address: 0,
            lines: Box::new([Line { frame, line: 0 }]),
        });
        locations.insert(id, loc);
    }

    let mut stack_ids: BTreeMap<i64, StackId> = BTreeMap::new();
    let mut current: Option<i64> = None;
    let mut path_locs: Vec<LocationId> = Vec::new();
    let rows = collect(
        &conn,
        "SELECT s.id, sf.frame_id FROM stacks s LEFT JOIN stack_frames sf ON sf.stack_id = s.id \
         ORDER BY s.id, sf.depth",
        |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Option<i64>>(1)?)),
    )
    .ctx(q("stacks"))?;
    for (stack, frame) in rows {
        if current != Some(stack) {
            if let Some(prev) = current {
                stack_ids.insert(prev, profile.stacks.intern(&path_locs));
            }
            current = Some(stack);
            path_locs.clear();
        }
        if let Some(frame) = frame {
            let loc = *locations.get(&frame).ok_or_else(|| {
                corrupt(
                    "stack_frames",
                    format!("stack {stack} names missing frame {frame}"),
                )
            })?;
            path_locs.push(loc);
        }
    }
    if let Some(prev) = current {
        stack_ids.insert(prev, profile.stacks.intern(&path_locs));
    }

    let mut stmt = conn
        .prepare("SELECT time_ns, instance_id, weight, stack_id, meta FROM samples ORDER BY id")
        .ctx(q("samples"))?;
    let mut rows = stmt.query([]).ctx(q("samples"))?;
    // Every sum of weights downstream (totals, exports, statistics) is at most this one, so a
    // file whose weights cannot add up in a u64 is refused here instead of overflowing there.
    let mut total_weight = 0u64;
    while let Some(r) = rows.next().ctx(q("samples"))? {
        let get = |i| r.get::<_, i64>(i);
        let (instance, stack) = (get(1).ctx(q("samples"))?, get(3).ctx(q("samples"))?);
        let weight = get(2).ctx(q("samples"))?;
        let weight =
            u64::try_from(weight).map_err(|_| corrupt("samples", format!("negative weight {weight}")))?;
        total_weight = total_weight
            .checked_add(weight)
            .ok_or_else(|| corrupt("samples", "sample weights add up beyond 2^64".to_string()))?;
        profile.push_sample(Sample {
            time_ns: u64_of(r.get(0).ctx(q("samples"))?),
            instance: *instance_ids
                .get(&instance)
                .ok_or_else(|| corrupt("samples", format!("missing instance {instance}")))?,
            weight,
            stack: *stack_ids
                .get(&stack)
                .ok_or_else(|| corrupt("samples", format!("missing stack {stack}")))?,
            meta: schema::unpack_sample_meta(get(4).ctx(q("samples"))?),
        });
    }
    drop(rows);
    drop(stmt);

    // Every recorded line: the session file is read whole (the engine keeps the newest).
    let mut console = ConsoleLog::keeping(usize::MAX);
    for (time_ns, text) in collect(&conn, "SELECT time_ns, text FROM console ORDER BY id", |r| {
        Ok((u64_of(r.get(0)?), r.get::<_, String>(1)?))
    })
    .ctx(q("console"))?
    {
        console.push_line(time_ns, &text);
    }

    let markers = collect(
        &conn,
        "SELECT time_ns, kind, text FROM markers ORDER BY id",
        |r| {
            Ok(MarkerRecord {
                time_ns: u64_of(r.get(0)?),
                kind: r.get(1)?,
                text: r.get(2)?,
            })
        },
    )
    .ctx(q("markers"))?;

    let event_types = read_event_types(path, &conn)?;

    // Sessions written before rebuilt events were marked lack the column: 0 for them.
    let has_rebuilt = collect(&conn, "SELECT name FROM pragma_table_info('events')", |r| {
        r.get::<_, String>(0)
    })
    .ctx(q("events"))?
    .iter()
    .any(|c| c == "rebuilt");
    let events_sql = if has_rebuilt {
        "SELECT time_ns, cpu, pid, tid, type_id, raw, callchain, rebuilt FROM events ORDER BY id"
    } else {
        "SELECT time_ns, cpu, pid, tid, type_id, raw, callchain, 0 FROM events ORDER BY id"
    };
    let events = collect(&conn, events_sql, |r| {
        let chain: Option<Vec<u8>> = r.get(6)?;
        Ok(OwnedTraceEvent {
            time_ns: r.get::<_, i64>(0)? as u64,
            cpu: r.get(1)?,
            pid: r.get(2)?,
            tid: r.get(3)?,
            event: EventIndex(r.get(4)?),
            raw: r.get(5)?,
            callchain: chain
                .unwrap_or_default()
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                .collect(),
            rebuilt: r.get::<_, i64>(7)? != 0,
        })
    })
    .ctx(q("events"))?;

    let symbols = collect(
        &conn,
        "SELECT module, address, name, offset FROM symbols ORDER BY module, address",
        |r| {
            Ok(SymbolRecord {
                module: r.get(0)?,
                address: r.get::<_, i64>(1)? as u64,
                name: r.get(2)?,
                offset: r.get::<_, i64>(3)? as u64,
            })
        },
    )
    .ctx(q("symbols"))?;

    let lost = collect(
        &conn,
        "SELECT time_ns, cpu, count FROM lost ORDER BY rowid",
        |r| {
            Ok(LostRecord {
                time_ns: u64_of(r.get(0)?),
                cpu: r.get(1)?,
                count: r.get::<_, i64>(2)? as u64,
            })
        },
    )
    .ctx(q("lost"))?;

    Ok(RecordedSession {
        path: path.into(),
        meta,
        profile,
        console,
        markers,
        event_types,
        events,
        symbols,
        lost,
    })
}

/// The event types of a session, layouts decoded.
pub fn read_event_types(path: &Path, conn: &Connection) -> Result<Vec<RecordedEventType>, StoreError> {
    let rows = collect(
        conn,
        "SELECT id, alias, filter, layout_json FROM event_types ORDER BY id",
        |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, String>(3)?,
            ))
        },
    )
    .ctx(|| format!("{}: cannot read event_types", path.display()))?;
    rows.into_iter()
        .map(|(id, alias, filter, json)| {
            let corrupt = |reason: String| StoreError::Corrupt {
                path: path.into(),
                what: "an event type",
                reason: format!("event type {id}: {reason}"),
            };
            let index = u16::try_from(id).map_err(|_| corrupt("id out of range".into()))?;
            let layout = layout_from_json(&json)
                .map_err(|reason| corrupt(format!("its stored layout is not valid: {reason}")))?;
            Ok(RecordedEventType {
                index: EventIndex(index),
                alias,
                filter,
                layout,
            })
        })
        .collect()
}

fn collect<T>(
    conn: &Connection,
    sql: &str,
    map: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<Vec<T>> {
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map([], map)?;
    rows.collect()
}
