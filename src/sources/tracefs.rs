//! Tracepoints through tracefs: mounting it, the event list, each event's `format` file,
//! the perf-prof event selector syntax (`sys:name[/filter/attr/.../]`, wildcards, probes),
//! and the uprobes perfscope defines in `uprobe_events` (removed when it is done).
//!
//! Layouts are always read from the running kernel's `format` files (perf-prof breaks on
//! 6.18 because it hard-codes them). This module reads tracefs (and writes only `uprobe_events`): it opens
//! no perf events and decodes no samples beyond raw event lines ([`EventPrinter`]: the
//! event's `print fmt:`, else [`format_fields`]).

mod format;
mod late_removal;
mod mount;
mod print;
mod print_fmt;
mod resolve;
mod selector;
mod uprobe;

use std::path::{Path, PathBuf};

pub use format::{FormatError, parse_format};
pub use mount::{TRACEFS_MOUNT_POINT, find_in_mounts, mount_tracefs};
pub use print::format_fields;
pub use print_fmt::{EventPrinter, PrintFmt};
pub use resolve::{BoundAttrs, ResolveError, ResolvedEvent, bind_event, resolve};
pub use selector::{AttrExpr, EventSpec, ProbeAt, ProbeSpec, SelectorError, UprobeSpec, parse_selectors};
pub use uprobe::{PROBE_GROUP_PREFIX, UprobeDefinition, UprobeGroup};

use crate::trace::event::EventLayout;

#[derive(Debug, thiserror::Error)]
pub enum TracefsError {
    #[error(
        "tracefs is not mounted and only root may mount it: run \
         `sudo mount -t tracefs nodev {TRACEFS_MOUNT_POINT}` or run perfscope as root"
    )]
    NotMounted,
    #[error(
        "could not mount tracefs at {}: {cause}; try `mount -t tracefs nodev {}` by hand \
         (the kernel needs CONFIG_TRACING)", point.display(), point.display()
    )]
    MountFailed { point: PathBuf, cause: std::io::Error },
    #[error("cannot read {}: permission denied; tracefs is root-only here, run perfscope as root", path.display())]
    PermissionDenied { path: PathBuf },
    #[error("cannot read {}: {cause}", path.display())]
    Io { path: PathBuf, cause: std::io::Error },
    #[error("no tracepoint {system}:{name} (see {} for the list)", available.display())]
    NoSuchEvent {
        system: String,
        name: String,
        available: PathBuf,
    },
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error(
        "this kernel has no uprobe events ({} is missing: CONFIG_UPROBE_EVENTS is off), so uprobe: selectors cannot work here",
        control.display()
    )]
    NoUprobeEvents { control: PathBuf },
    #[error("the kernel refused the probe `{line}` (written to {}): {cause}", control.display())]
    ProbeRefused {
        line: String,
        control: PathBuf,
        cause: std::io::Error,
    },
}

/// An open tracefs: its root directory and the kernel's event list.
#[derive(Clone, Debug)]
pub struct Tracefs {
    root: PathBuf,
    events: Vec<String>,
}

impl Tracefs {
    /// Find tracefs (mounting it at /sys/kernel/tracing if needed and we are root) and read
    /// its event list.
    pub fn open() -> Result<Self, TracefsError> {
        Self::at(mount::find_or_mount()?)
    }

    /// A tracefs tree at `root` (the live mount, or a copy of its `available_events` and
    /// `events/SYS/NAME/format` files).
    pub fn at(root: impl Into<PathBuf>) -> Result<Self, TracefsError> {
        let root = root.into();
        let list = read(&root.join("available_events"))?;
        let events = list
            .lines()
            .map(str::trim)
            .filter(|l| l.contains(':'))
            .map(String::from)
            .collect();
        Ok(Self { root, events })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every tracepoint as `sys:name`, in the kernel's `available_events` order.
    pub fn events(&self) -> &[String] {
        &self.events
    }

    pub fn has_event(&self, system: &str, name: &str) -> bool {
        self.events
            .iter()
            .any(|e| e.split_once(':') == Some((system, name)))
    }

    /// The parsed `format` of `system:name`, id included.
    pub fn layout(&self, system: &str, name: &str) -> Result<EventLayout, TracefsError> {
        let text = read(&self.event_dir(system, name)?.join("format"))?;
        Ok(parse_format(system, name, &text)?)
    }

    /// The tracepoint id (perf's `config`) from `events/SYS/NAME/id`.
    pub fn event_id(&self, system: &str, name: &str) -> Result<u64, TracefsError> {
        let path = self.event_dir(system, name)?.join("id");
        let text = read(&path)?;
        text.trim().parse().map_err(|_| TracefsError::Io {
            path,
            cause: std::io::Error::new(std::io::ErrorKind::InvalidData, "not a number"),
        })
    }

    fn event_dir(&self, system: &str, name: &str) -> Result<PathBuf, TracefsError> {
        let plain = |s: &str| !s.is_empty() && s != "." && s != ".." && !s.contains(['/', '\0']);
        let dir = self.root.join("events").join(system).join(name);
        if plain(system) && plain(name) && dir.is_dir() {
            Ok(dir)
        } else {
            Err(TracefsError::NoSuchEvent {
                system: system.to_string(),
                name: name.to_string(),
                available: self.root.join("available_events"),
            })
        }
    }
}

fn read(path: &Path) -> Result<String, TracefsError> {
    crate::input::read_system_text(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::PermissionDenied => TracefsError::PermissionDenied {
            path: path.to_path_buf(),
        },
        _ => TracefsError::Io {
            path: path.to_path_buf(),
            cause: source,
        },
    })
}

/// The fixture tree under tests/fixtures/tracefs (real 6.18 format files).
#[cfg(test)]
pub(crate) fn fixture_tracefs() -> Tracefs {
    Tracefs::at(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tracefs"))
        .expect("fixture tracefs opens")
}
