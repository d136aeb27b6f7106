//! Feeds: one per kind of session. A feed turns what a source reads (perf_event rings,
//! tracefs records, the QEMU plugin's stream, a qperf.bin, a folded file, a session file)
//! into typed batches of model data — [`Update`]s — and hands them to the engine, which
//! alone writes model state. Interning and symbolization happen here, on the feed's
//! threads, so samples reach the engine as ids.

pub mod file;
pub mod follow;
pub mod guess;
pub mod host;
pub mod ingest;
pub mod interned;
pub mod memory;
pub mod qemu;
pub mod qemu_setup;
pub mod replay;
pub mod symbol_options;
pub mod update;

pub use update::{
    EventFormat, FeedStatus, Offenders, RecordOnly, RowsUpdate, SampleLine, SessionStart, Update, Waiting,
};

/// A source of updates, polled by the engine.
pub trait Feed: Send {
    /// Append whatever arrived since the last poll to `out`.
    fn poll(&mut self, out: &mut Vec<Update>) -> anyhow::Result<FeedStatus>;

    /// Bytes the user typed for the source (the guest console); ignored by default.
    fn send_input(&mut self, _bytes: &[u8]) {}

    /// The session ends: stop what runs (QEMU, perf events); what is still in flight is
    /// handed over by the following polls, until `Finished`.
    fn stop(&mut self) {}

    /// The source finds its markers while it runs (QEMU's console): a marker may arrive
    /// after the samples of its time, so a headless engine holds the newest samples raw.
    /// Inputs whose markers are known up front (files, `--start-sec`) and sources without
    /// markers (host sampling: one slice keeps its memory flat) say `false`.
    fn is_live(&self) -> bool {
        false
    }

    /// The source is a recording read to its end (a file, a session): stopping it
    /// earlier cuts the figures short. Sources that run until stopped (QEMU, perf events,
    /// a followed file) say `false`: stopping is how they end.
    fn is_recorded(&self) -> bool {
        false
    }

    /// How long, once stopped, the feed may take to hand over what is in flight before the
    /// run ends without it (a signal ends every command within about 2 s). A QEMU run says
    /// more: QEMU is asked to quit and its plugin to flush the recording.
    fn stop_grace(&self) -> std::time::Duration {
        std::time::Duration::from_secs(1)
    }

    /// Work done and to do (bytes of a file being decoded), when the feed knows.
    fn progress(&self) -> Option<(u64, u64)> {
        None
    }
}
