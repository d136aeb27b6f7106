//! Every byte perfscope reads from a file it was given or found — recorded profiles,
//! console logs, symbol files, configuration, `/proc`, `/sys` and tracefs text, a QMP
//! answer, QEMU's stderr — goes through this one bounded reader, so no input can make it
//! read forever or hold more than the input kind's cap.
//!
//! - [`InputKind`] names what an input is and carries its caps ([`Limits`]): the longest
//!   line, and the most bytes read (or none, for an input streamed through in bounded
//!   memory). The README's "Bounded input" section lists them.
//! - [`InputFile`] opens a path once and reads it once: a pipe or a process substitution
//!   is never reopened, and a format is told from a [`InputFile::peek`]ed prefix of the
//!   same reader that then goes on from it. [`FileType::of_path`] tells what a path is
//!   without opening it (opening a FIFO has effects).
//! - [`BoundedLines`] yields lines no longer than the cap; [`read_bytes`] and
//!   [`read_text`] hold a small input whole; [`map`] maps an ELF in place (a regular file
//!   only: a pipe or a device cannot be mapped).
//!
//! This module knows formats only by their caps: it imports nothing of the crate, so every
//! layer above can use it.

mod error;
mod file;
mod kind;
mod lines;
mod mapped;
mod whole;

pub use error::InputError;
pub use file::{FileType, InputFile};
pub use kind::{InputKind, Limits, size_text};
pub use lines::BoundedLines;
pub use mapped::map;
pub use whole::{read_bytes, read_kept, read_system_text, read_text};
