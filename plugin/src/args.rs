//! The `-plugin libperfscope_qemu_plugin.so,key=value,…` arguments: parsed and validated
//! into [`PluginArgs`] before anything is opened or registered.
//!
//! Compatible with the reference qperf plugin (same keys, defaults and checks), with its
//! parser bugs fixed: values are taken from QEMU's raw `key=value` text, not from the
//! qemu-plugin crate's guess at a type, so `filter_kernel=true` and a hex filter made only
//! of decimal digits both work, and `freq=0` is an error instead of a panic. Unknown keys
//! are reported as warnings.

use std::fmt;
use std::path::PathBuf;

use crate::filter::{AddressFilter, AliasRange, TextRange};

/// Where a sample's PC comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SampleMode {
    /// A conditional callback on every translation block: the PC is the block's start.
    Tb,
    /// A conditional callback on every instruction: the exact PC, at a higher cost.
    Insn,
}

impl SampleMode {
    pub fn name(self) -> &'static str {
        match self {
            SampleMode::Tb => "tb",
            SampleMode::Insn => "insn",
        }
    }
}

/// How a sample's trace is collected; the byte is the record's `callchain` field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CallchainMode {
    Leaf,
    FramePointer,
    /// The kernel ELF's DWARF CFI (`cfi=`); `logical`, the reference's name for the mode
    /// it documents but rejects, is accepted for xtask scripts.
    Dwarf,
}

impl CallchainMode {
    pub fn record_byte(self) -> u8 {
        match self {
            CallchainMode::Leaf => 0,
            CallchainMode::FramePointer => 1,
            CallchainMode::Dwarf => 2,
        }
    }

    /// The sidecar's `callchain_method` value.
    pub fn name(self) -> &'static str {
        match self {
            CallchainMode::Leaf => "leaf",
            CallchainMode::FramePointer => "fp",
            CallchainMode::Dwarf => "dwarf",
        }
    }

    /// Whether samples read registers and walk the stack.
    pub fn unwinds(self) -> bool {
        self != CallchainMode::Leaf
    }
}

/// Every setting of the plugin, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginArgs {
    pub freq_hz: u32,
    pub out: PathBuf,
    pub max_depth: usize,
    pub queue_size: usize,
    pub mode: SampleMode,
    pub callchain: CallchainMode,
    pub filter: AddressFilter,
    /// CLOCK_MONOTONIC ns the record timestamps count from; `None` = the plugin's load time.
    pub epoch_ns: Option<u64>,
    /// A Unix socket perfscope listens on; the plugin connects and mirrors the records.
    pub stream: Option<PathBuf>,
    /// Executed-block/instruction counters (one inline add per executed block), opt-in
    /// (`counters=on`): the sampling path's budget is 10 % of guest time and they took up
    /// to 6 % of it at 997 Hz (tb+fp, QEMU CPU time: 1.14× with them against 1.08×
    /// without in one run of scripts/bench-plugin-overhead.sh, 1.11× both in another).
    /// Off, the summary says `disabled`.
    pub counters: bool,
    /// The kernel ELF whose CFI `callchain=dwarf` unwinds with.
    pub cfi: Option<PathBuf>,
}

/// What [`PluginArgs::parse`] has to say besides the result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParseWarnings(pub Vec<String>);

/// A rejected argument list, phrased so the user knows what to change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgError(pub String);

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ArgError {}

/// The reference's defaults (notes/qperf-format.md, Appendix B).
pub const DEFAULT_FREQ_HZ: u32 = 99;
pub const DEFAULT_OUT: &str = "qperf.bin";
pub const DEFAULT_MAX_DEPTH: usize = 128;
pub const DEFAULT_QUEUE_SIZE: usize = 4096;
/// perfscope's decoder refuses v3 traces longer than this (the reference analyzer's
/// 256 KiB per-record limit), so deeper stacks would make unreadable files.
pub const MAX_TRACE_LEN: usize = 32762;

const KNOWN_KEYS: &[&str] = &[
    "freq",
    "out",
    "max_depth",
    "queue_size",
    "mode",
    "callchain",
    "filter_start",
    "filter_end",
    "filter_alias_start",
    "filter_alias_end",
    "filter_alias_offset",
    "filter_kernel",
    "stream",
    "epoch_ns",
    "counters",
    "cfi",
];

fn err(message: impl Into<String>) -> ArgError {
    ArgError(message.into())
}

fn parse_u64(key: &str, value: &str) -> Result<u64, ArgError> {
    value
        .trim()
        .parse::<u64>()
        .map_err(|_| err(format!("{key}={value}: expected a non-negative decimal integer")))
}

fn parse_positive(key: &str, value: &str, max: u64) -> Result<u64, ArgError> {
    let n = parse_u64(key, value)?;
    if n == 0 {
        return Err(err(format!("{key}=0: must be at least 1")));
    }
    if n > max {
        return Err(err(format!("{key}={value}: must be at most {max}")));
    }
    Ok(n)
}

fn parse_hex(key: &str, value: &str) -> Result<u64, ArgError> {
    let digits = value
        .trim()
        .strip_prefix("0x")
        .or_else(|| value.trim().strip_prefix("0X"))
        .unwrap_or(value.trim());
    u64::from_str_radix(digits, 16).map_err(|_| {
        err(format!(
            "{key}={value}: expected a hex address such as 0xffffffc080200000"
        ))
    })
}

fn parse_bool(key: &str, value: &str) -> Result<bool, ArgError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        // The reference treats any integer as a boolean (non-zero = true).
        other => other.parse::<i64>().map(|n| n != 0).map_err(|_| {
            err(format!(
                "{key}={value}: expected 0/1, true/false, yes/no or on/off"
            ))
        }),
    }
}

impl PluginArgs {
    /// Parse QEMU's raw `key=value` strings. Later duplicates win, as with the reference's
    /// map. `Err` on any invalid or inconsistent value; unknown keys only warn.
    pub fn parse<S: AsRef<str>>(raw: &[S]) -> Result<(PluginArgs, ParseWarnings), ArgError> {
        let mut warnings = ParseWarnings::default();
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for item in raw {
            let item = item.as_ref();
            let Some((key, value)) = item.split_once('=') else {
                return Err(err(format!(
                    "argument `{item}` has no `=`: write it as key=value"
                )));
            };
            let key = key.trim();
            if !KNOWN_KEYS.contains(&key) {
                warnings.0.push(format!(
                    "unknown argument `{key}` ignored (known: {})",
                    KNOWN_KEYS.join(", ")
                ));
                continue;
            }
            pairs.retain(|(k, _)| *k != key);
            pairs.push((key, value));
        }
        let get = |key: &str| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);

        let freq_hz = match get("freq") {
            None => DEFAULT_FREQ_HZ,
            Some(v) => parse_positive("freq", v, u64::from(u32::MAX))? as u32,
        };
        let out = match get("out") {
            None => PathBuf::from(DEFAULT_OUT),
            Some(v) if v.trim().is_empty() => return Err(err("out= is empty: give the qperf.bin path")),
            Some(v) => PathBuf::from(v),
        };
        let max_depth = match get("max_depth") {
            None => DEFAULT_MAX_DEPTH,
            Some(v) => parse_positive("max_depth", v, MAX_TRACE_LEN as u64)? as usize,
        };
        let queue_size = match get("queue_size") {
            None => DEFAULT_QUEUE_SIZE,
            Some(v) => parse_positive("queue_size", v, 1 << 24)? as usize,
        };
        let mode = match get("mode").map(str::trim) {
            None | Some("tb") => SampleMode::Tb,
            Some("insn") => SampleMode::Insn,
            Some(other) => return Err(err(format!("mode={other}: expected tb or insn"))),
        };
        let callchain = match get("callchain").map(str::trim) {
            None | Some("leaf") => CallchainMode::Leaf,
            Some("fp" | "frame-pointer" | "frame_pointer") => CallchainMode::FramePointer,
            Some("dwarf" | "logical") => CallchainMode::Dwarf,
            Some(other) => {
                return Err(err(format!(
                    "callchain={other}: expected leaf, fp, frame-pointer, frame_pointer, dwarf or logical"
                )));
            }
        };
        let cfi = match get("cfi") {
            None => None,
            Some(v) if v.trim().is_empty() => return Err(err("cfi= is empty: give the kernel ELF")),
            Some(v) => Some(PathBuf::from(v)),
        };
        if callchain == CallchainMode::Dwarf && cfi.is_none() {
            return Err(err(
                "callchain=dwarf needs cfi=<kernel ELF>: the ELF whose .eh_frame or .debug_frame describes the kernel's frames",
            ));
        }

        let text = match (get("filter_start"), get("filter_end")) {
            (None, None) => None,
            (Some(s), Some(e)) => {
                let start = parse_hex("filter_start", s)?;
                let end = parse_hex("filter_end", e)?;
                if start >= end {
                    return Err(err(format!(
                        "filter_start={s} is not below filter_end={e}: give the kernel text range [start, end)"
                    )));
                }
                Some(TextRange { start, end })
            }
            _ => {
                return Err(err(
                    "filter_start and filter_end go together: give both or neither",
                ));
            }
        };
        let alias = match (
            get("filter_alias_start"),
            get("filter_alias_end"),
            get("filter_alias_offset"),
        ) {
            (None, None, None) => None,
            (Some(s), Some(e), Some(o)) => {
                let start = parse_hex("filter_alias_start", s)?;
                let end = parse_hex("filter_alias_end", e)?;
                let offset = parse_hex("filter_alias_offset", o)?;
                if start >= end {
                    return Err(err(format!(
                        "filter_alias_start={s} is not below filter_alias_end={e}"
                    )));
                }
                Some(AliasRange { start, end, offset })
            }
            _ => {
                return Err(err(
                    "filter_alias_start, filter_alias_end and filter_alias_offset go together: give all three or none",
                ));
            }
        };
        let kernel_only = match get("filter_kernel") {
            Some(v) => parse_bool("filter_kernel", v)?,
            // The reference's default: filtering is on as soon as a range is given.
            None => text.is_some() || alias.is_some(),
        };
        if kernel_only && text.is_none() && alias.is_none() {
            return Err(err(
                "filter_kernel=1 needs filter_start/filter_end (or the filter_alias_* triple): give the kernel text range",
            ));
        }
        let epoch_ns = get("epoch_ns").map(|v| parse_u64("epoch_ns", v)).transpose()?;
        let stream = match get("stream") {
            None => None,
            Some(v) if v.trim().is_empty() => return Err(err("stream= is empty: give the Unix socket path")),
            Some(v) => Some(PathBuf::from(v)),
        };

        let counters = get("counters")
            .map(|v| parse_bool("counters", v))
            .transpose()?
            .unwrap_or(false);

        Ok((
            PluginArgs {
                freq_hz,
                out,
                max_depth,
                queue_size,
                mode,
                callchain,
                filter: AddressFilter {
                    text,
                    alias,
                    kernel_only,
                },
                epoch_ns,
                stream,
                counters,
                cfi,
            },
            warnings,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &[&str]) -> Result<PluginArgs, ArgError> {
        PluginArgs::parse(raw).map(|(args, _)| args)
    }

    #[test]
    fn defaults_match_the_reference() {
        let args = parse(&[]).unwrap();
        assert_eq!(args.freq_hz, 99);
        assert_eq!(args.out, PathBuf::from("qperf.bin"));
        assert_eq!(args.max_depth, 128);
        assert_eq!(args.queue_size, 4096);
        assert_eq!(args.mode, SampleMode::Tb);
        assert_eq!(args.callchain, CallchainMode::Leaf);
        assert!(!args.filter.kernel_only);
        assert_eq!(args.epoch_ns, None);
        assert_eq!(args.stream, None);
        assert!(!args.counters, "opt-in");
        assert!(parse(&["counters=on"]).unwrap().counters);
        assert!(!parse(&["counters=off"]).unwrap().counters);
    }

    #[test]
    fn freq_zero_is_an_error_not_a_panic() {
        let e = parse(&["freq=0"]).unwrap_err();
        assert!(e.0.contains("freq=0"), "{e}");
        assert!(parse(&["freq=-5"]).is_err());
        assert_eq!(parse(&["freq=1000"]).unwrap().freq_hz, 1000);
    }

    #[test]
    fn filter_kernel_accepts_numbers_and_words() {
        let base = ["filter_start=0xffffffc080200000", "filter_end=ffffffc080201000"];
        for (word, want) in [
            ("1", true),
            ("0", false),
            ("true", true),
            ("off", false),
            ("Yes", true),
            ("no", false),
            ("2", true),
        ] {
            let arg = format!("filter_kernel={word}");
            let args = parse(&[base[0], base[1], &arg]).unwrap();
            assert_eq!(args.filter.kernel_only, want, "{word}");
        }
        assert!(parse(&[base[0], base[1], "filter_kernel=maybe"]).is_err());
        // Default: on when a range is given.
        assert!(parse(&base).unwrap().filter.kernel_only);
    }

    #[test]
    fn filters_are_validated_as_the_reference_does() {
        // Decimal-looking hex works (the reference rejected it as an Integer).
        let args = parse(&["filter_start=80200000", "filter_end=80300000"]).unwrap();
        assert_eq!(
            args.filter.text,
            Some(TextRange {
                start: 0x8020_0000,
                end: 0x8030_0000
            })
        );
        assert!(parse(&["filter_start=0x10"]).is_err());
        assert!(parse(&["filter_start=0x20", "filter_end=0x10"]).is_err());
        assert!(parse(&["filter_alias_start=0x1", "filter_alias_end=0x2"]).is_err());
        let args = parse(&[
            "filter_alias_start=0x80200000",
            "filter_alias_end=0x80300000",
            "filter_alias_offset=0xffffffc000000000",
        ])
        .unwrap();
        assert_eq!(args.filter.alias.map(|a| a.offset), Some(0xffffffc000000000));
        assert!(args.filter.kernel_only);
        assert!(parse(&["filter_kernel=1"]).is_err(), "filter without a range");
    }

    #[test]
    fn modes_callchains_and_new_keys() {
        let args = parse(&[
            "mode=insn",
            "callchain=frame_pointer",
            "epoch_ns=123456789",
            "stream=/tmp/s.sock",
            "out=/tmp/x.bin",
            "max_depth=16",
            "queue_size=8",
        ])
        .unwrap();
        assert_eq!(args.mode, SampleMode::Insn);
        assert_eq!(args.callchain, CallchainMode::FramePointer);
        assert_eq!(args.epoch_ns, Some(123_456_789));
        assert_eq!(args.stream, Some(PathBuf::from("/tmp/s.sock")));
        assert_eq!(args.out, PathBuf::from("/tmp/x.bin"));
        assert_eq!((args.max_depth, args.queue_size), (16, 8));
        for c in ["fp", "frame-pointer"] {
            assert_eq!(
                parse(&[&format!("callchain={c}")]).unwrap().callchain,
                CallchainMode::FramePointer
            );
        }
        assert_eq!(
            parse(&["callchain=logical", "cfi=/k.elf"]).unwrap().callchain,
            CallchainMode::Dwarf,
            "the reference's name for it"
        );
        let dwarf = parse(&["callchain=dwarf", "cfi=/k.elf"]).unwrap();
        assert_eq!(
            (dwarf.callchain, dwarf.cfi.as_deref()),
            (CallchainMode::Dwarf, Some(std::path::Path::new("/k.elf")))
        );
        assert_eq!(dwarf.callchain.record_byte(), 2);
        let e = parse(&["callchain=dwarf"]).unwrap_err();
        assert!(e.0.contains("needs cfi="), "{e}");
        assert!(parse(&["mode=cond"]).is_err());
        assert!(parse(&["max_depth=0"]).is_err());
        assert!(parse(&["max_depth=40000"]).is_err());
        assert!(parse(&["queue_size=0"]).is_err());
        assert!(parse(&["epoch_ns=-1"]).is_err());
    }

    #[test]
    fn unknown_keys_warn_and_numeric_out_is_a_path() {
        let (args, warnings) = PluginArgs::parse(&["out=123", "frequency=5"]).unwrap();
        assert_eq!(args.out, PathBuf::from("123"));
        assert_eq!(warnings.0.len(), 1);
        assert!(warnings.0[0].contains("frequency"));
        assert!(PluginArgs::parse(&["novalue"]).is_err());
    }
}
