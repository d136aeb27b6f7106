//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test binary uses a different part

pub mod arch_suite;
pub mod guest;
pub mod host;
pub mod plugin;
pub mod profile;
pub mod tmux;
