//! The host perf_event source: events opened per CPU or per thread, their mmap ring
//! buffers, and the records read from them.
//!
//! The road a record travels here, one file per step:
//! [`attr`] builds the `perf_event_attr` → [`targets`] says where (CPUs or threads) →
//! [`fd`] opens it and drives its ioctls → [`ring`] reads the mmap ring in place →
//! [`record`] decodes one record from its bytes ([`callchain`] splits its stack,
//! [`user_stack`] reads the user registers and stack copy of `--call-graph dwarf`;
//! [`sample_layout`] reads a tracing session's few fields of a sample in place) → [`merge`] orders records across rings
//! when an analyzer needs time order → [`reader`] ties it together as [`PerfEvents`].
//!
//! Nothing here knows of symbols, tracepoint formats or views: a sample's `raw` bytes are
//! read by the model's `EventLayout`, its callchain is resolved by `symbols`.

pub mod attr;
pub mod callchain;
pub mod closer;
pub mod error;
pub mod fd;
pub mod merge;
pub mod reader;
pub mod record;
pub mod refusal;
pub mod ring;
pub mod sample_layout;
pub mod software;
pub mod targets;
pub mod user_stack;

pub use error::PerfEventError;

pub use attr::{EventAttr, EventKind, Sampling, Wakeup};
pub use fd::own_pid;
pub use reader::{LostRange, Ordered, PerfEvents, PollOutcome, RecordRef, RingCounters, RingOptions};
pub use record::{Callchain, DecodeError, FrameContext, Record, Sample, SampleFormat};
pub use targets::{Target, inheriting, resolve_targets};
