//! Argument groups the host subcommands share (`top`, `profile`, `syscalls`, `rundelay`,
//! `multi-trace`), as clap derives, and their conversion into the library's plain option
//! structs. `src/main.rs` assembles the subcommands; nothing here runs anything.

pub mod host;
pub mod host_commands;
pub mod tui;
pub mod units;
