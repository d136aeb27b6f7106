//! Sessions in SQLite: what a live source records (`--record session.db`), what
//! `perfscope open session.db` replays and what `perfscope sql` queries.
//!
//! The store owns the session file format ([`schema`], documented in `README.md` beside
//! this file), the [`Recorder`] that writes rows on its own thread, the [`reader`] that
//! rebuilds model types from a file, and the [`sql`] runner. It speaks only the model's
//! types (samples, stacks as frame names, trace events, console lines, markers): it knows
//! no source and no view.

pub mod error;
pub mod layout_json;
pub mod reader;
pub mod recorder;
pub mod schema;
pub mod sql;
pub mod table;
mod writer;

pub use error::StoreError;
pub use reader::{LostRecord, MarkerRecord, RecordedEventType, RecordedSession, SymbolRecord, open_session};
pub use recorder::{FrameRef, InstanceRef, RecordSummary, Recorder, SessionMeta, StackRef};
pub use sql::{SqlOutput, run_sql};
