//! The probes a session's selectors ask for, made into tracepoints before the selectors
//! are resolved: the binary found, the function turned into a file offset (its ELF
//! symbol table), the uprobe defined in this process's group, and the spec renamed to
//! that `group:event` so it resolves like any tracepoint. kprobes are refused here, with
//! what this kernel has.

use std::path::{Path, PathBuf};

use crate::sources::tracefs::{
    EventSpec, ProbeAt, ProbeSpec, SelectorError, Tracefs, UprobeDefinition, UprobeGroup, UprobeSpec,
};
use crate::symbols::host::probe_offset::{code_file_offset, symbol_file_offset};

/// Define the probes of `specs` in `group` (created at the first one) and point each
/// such spec at its tracefs event. Errors name the selector.
pub fn define_probes(
    tracefs: &Tracefs,
    specs: &mut [EventSpec],
    group: &mut Option<UprobeGroup>,
) -> anyhow::Result<()> {
    for spec in specs.iter_mut() {
        let Some(probe) = spec.probe.clone() else {
            continue;
        };
        let uprobe = match probe {
            ProbeSpec::Kernel { .. } => return Err(kprobe_error(tracefs, spec).into()),
            ProbeSpec::User(uprobe) => uprobe,
        };
        let definition = definition(spec, &uprobe).map_err(|e| pointed(spec, format!("{e:#}")))?;
        let group = match group {
            Some(group) => group,
            None => group.insert(UprobeGroup::new(tracefs)?),
        };
        let base = definition.event.clone();
        let mut event = base.clone();
        let mut n = 1;
        while tracefs
            .root()
            .join("events")
            .join(group.group())
            .join(&event)
            .exists()
        {
            // Two selectors on the same function (in two binaries, or with two filters).
            n += 1;
            event = format!("{base}_{n}");
        }
        group.define(&UprobeDefinition {
            event: event.clone(),
            ..definition
        })?;
        spec.system = group.group().to_string();
        spec.name = event;
    }
    Ok(())
}

/// The probe `uprobe` of `spec`: where its binary is, the file offset, the fields.
fn definition(spec: &EventSpec, uprobe: &UprobeSpec) -> anyhow::Result<UprobeDefinition> {
    let path = locate_binary(&uprobe.binary)?;
    let (file_offset, at_entry) = match &uprobe.at {
        ProbeAt::Symbol { name, offset } => (symbol_file_offset(&path, name, *offset)?, *offset == 0),
        ProbeAt::FileOffset(offset) => (code_file_offset(&path, *offset)?, false),
    };
    let fetch_args = if uprobe.ret {
        vec!["ret=$retval:s64".to_string()]
    } else if at_entry {
        // At a function's entry the argument registers hold its arguments: named fields
        // for filters (`/arg1==3/`), keys and the printed line. Elsewhere they hold
        // whatever the code put there, so no field pretends to be an argument.
        ARGUMENT_REGISTERS
            .iter()
            .enumerate()
            .map(|(i, reg)| format!("arg{}=%{reg}:u64", i + 1))
            .collect()
    } else {
        Vec::new()
    };
    Ok(UprobeDefinition {
        event: spec.name.clone(),
        ret: uprobe.ret,
        path,
        file_offset,
        fetch_args,
    })
}

/// The integer argument registers of the C calling convention, in order.
#[cfg(target_arch = "x86_64")]
const ARGUMENT_REGISTERS: &[&str] = &["di", "si", "dx", "cx", "r8", "r9"];
#[cfg(target_arch = "aarch64")]
const ARGUMENT_REGISTERS: &[&str] = &["x0", "x1", "x2", "x3", "x4", "x5"];
#[cfg(target_arch = "riscv64")]
const ARGUMENT_REGISTERS: &[&str] = &["a0", "a1", "a2", "a3", "a4", "a5"];
#[cfg(target_arch = "loongarch64")]
const ARGUMENT_REGISTERS: &[&str] = &["r4", "r5", "r6", "r7", "r8", "r9"];
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "loongarch64"
)))]
const ARGUMENT_REGISTERS: &[&str] = &[];

/// `binary` as an absolute path: a path as given (relative to the working directory), or
/// a bare name found in `$PATH`, as a shell would run it.
fn locate_binary(binary: &str) -> anyhow::Result<PathBuf> {
    let given = Path::new(binary);
    let found = if binary.contains('/') || given.exists() {
        Some(given.to_path_buf())
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(binary))
                .find(|p| p.is_file())
        })
    };
    let Some(found) = found else {
        anyhow::bail!("no binary '{binary}' (not a file here, nor in $PATH): give its path");
    };
    let path = found
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("no binary '{binary}' ({e}): give the path of an existing ELF file"))?;
    if !path.is_file() {
        anyhow::bail!("'{binary}' is not a file: give the path of an ELF file");
    }
    Ok(path)
}

fn kprobe_error(tracefs: &Tracefs, spec: &EventSpec) -> SelectorError {
    let kind = spec.probe.as_ref().map_or("kprobe", ProbeSpec::kind);
    let message = if tracefs.root().join("kprobe_events").exists() {
        format!(
            "{kind} events are not supported by perfscope yet; use a tracepoint (`perfscope list`) or a uprobe"
        )
    } else {
        format!(
            "this kernel has no kprobes ({} is missing: CONFIG_KPROBE_EVENTS is off), so {kind}: cannot work here; \
             use a tracepoint (`perfscope list`) or a uprobe",
            tracefs.root().join("kprobe_events").display()
        )
    };
    pointed(spec, message)
}

fn pointed(spec: &EventSpec, message: String) -> SelectorError {
    SelectorError {
        message,
        text: spec.source.to_string(),
        position: spec.name_offset,
        hint: None,
    }
}
