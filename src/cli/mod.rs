//! What each subcommand's arguments mean: the clap derives of every subcommand's flags,
//! grouped as the subcommands share them, their conversion into the library's plain
//! option structs, and the `run` functions that start each subcommand. `src/main.rs`
//! parses the command line and dispatches here.
//!
//! - [`recorded`], [`recorded_commands`]: `report`, `diff`, `open`, `sql` (recorded inputs).
//! - [`qemu_command`]: `qemu` (a guest kernel under QEMU with the sampling plugin).
//! - [`host`], [`host_commands`]: `top`, `profile`, `syscalls`, `rundelay`, `multi-trace`.
//! - [`event_commands`]: `trace`, `list`, `expr` (tracepoint events themselves).
//! - [`host_run`]: runs a host session from its options (every host subcommand ends there).
//! - [`tui`]: the terminal UI's flags; [`units`]: perf-prof's number syntax.
//! - [`output_file`]: `-o FILE` (the text output appended to a file).
//! - [`exit`]: the exit codes every subcommand shares and the outcome each returns.

pub mod event_commands;
pub mod exit;
pub mod host;
pub mod host_commands;
pub mod host_run;
pub mod kmem;
pub mod output_file;
pub mod profile_command;
pub mod qemu_command;
pub mod recorded;
pub mod recorded_commands;
pub mod tui;
pub mod units;
pub mod watchdog;
