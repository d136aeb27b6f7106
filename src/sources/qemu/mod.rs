//! Running QEMU for a profiling session: the command line per architecture and the
//! plugin's arguments, the serial console with prompt and marker detection, a clean stop
//! through QMP, and the host's view of the QEMU process (CPU time from /proc, software
//! perf counters). Knows nothing of symbols or views: it hands out console bytes, marker
//! times and process facts.

pub mod arch;
pub mod callchain_choice;
pub mod config_toml;
pub mod console;
pub mod host_perf;
pub mod host_time;
pub mod kernel_unwind;
pub mod machine;
pub mod plugin_args;
pub mod process;
pub mod qmp;
pub mod runtime_dir;
pub mod session;
pub mod session_options;
pub mod uefi;

pub use arch::Arch;
pub use session::{QemuSession, SessionReport, SessionUpdate};
pub use session_options::SessionOptions;
