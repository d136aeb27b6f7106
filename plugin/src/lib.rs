//! perfscope's QEMU TCG sampling plugin (system mode, plugin API v4, QEMU 10.0+).
//!
//! Samples the guest at `freq` Hz per vCPU through conditional callbacks on flags a timer
//! thread raises, optionally unwinds frame pointers, and writes qperf v3 records to `out`
//! (and mirrors them to a Unix socket with `stream=`), with the sidecar summary at exit.
//! See plugin/README.md for the arguments.
//!
//! [`entry`] wires the pieces to QEMU: install, vCPU init, translation, exit.
//! - [`args`]: arguments; [`filter`]: which addresses are profiled;
//! - [`instrument`]: what a translated block gets; [`sampler`]: flags, timer, one sample;
//! - [`counters`]: executed instructions/blocks at one inline add per block;
//! - [`halt`]: the instructions that halt a vCPU (its idle time);
//! - [`prologue`] + [`unwind`]: frame-pointer call chains; [`cfi`] + [`cfi_table`]: DWARF CFI
//!   call chains;
//! - [`record`]: the v3 bytes;
//! - [`writer`] + [`stream`]: queue, file and socket; [`summary`]: the sidecar;
//! - [`qemu`]: every unsafe call into QEMU and GLib.

//!
//! The QEMU-facing modules (`entry`, `instrument`, `qemu`, `sampler`) are left out of unit
//! test builds: a test executable has no QEMU to resolve `qemu_plugin_*` and GLib symbols
//! from. Everything else is plain Rust and unit-tested.
#![cfg_attr(test, allow(dead_code))]

mod args;
mod cfi;
mod cfi_table;
mod counters;
#[cfg(not(test))]
mod entry;
mod filter;
mod halt;
#[cfg(not(test))]
mod instrument;
mod prologue;
#[cfg(not(test))]
mod qemu;
mod record;
#[cfg(not(test))]
mod sampler;
mod stream;
mod summary;
mod unwind;
mod writer;
