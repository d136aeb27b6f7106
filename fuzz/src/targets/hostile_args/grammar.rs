//! perfscope's command line as its own `--help` tells it: every subcommand, its flags and
//! the kind of value each takes. Read from the binary, so a flag added tomorrow is fuzzed
//! tomorrow without a list here to keep up to date.

use std::path::Path;
use std::process::Command;

/// What a flag's value (or a positional argument) is, from its clap value name.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Seconds,
    Threshold,
    Number,
    Cpus,
    Pids,
    Path,
    Event,
    Regex,
    Arch,
    Query,
    /// A name the kind cannot be told from: anything.
    Text,
}

impl Kind {
    /// The kind a clap value name (`<S>`, `<PID,...>`, `<FILE>`) stands for.
    pub fn of(value_name: &str) -> Kind {
        let v = value_name.to_ascii_uppercase();
        let has = |words: &[&str]| words.iter().any(|w| v.contains(w));
        if v == "S" || has(&["SECONDS", "TIMEOUT", "DURATION"]) {
            Kind::Seconds
        } else if has(&["TIME", "THAN"]) {
            Kind::Threshold
        } else if has(&["PID", "TID"]) {
            Kind::Pids
        } else if has(&["LIST", "CPU"]) {
            Kind::Cpus
        } else if has(&[
            "FILE", "ELF", "DIR", "PATH", "BIN", "DB", "INPUT", "KERNEL", "SESSION", "BASE", "NEW", "OLD",
        ]) {
            Kind::Path
        } else if has(&["EVENT", "EXPR", "FILTER", "SELECTOR", "ALLOC", "FREE"]) {
            Kind::Event
        } else if has(&["REGEX", "PATTERN"]) {
            Kind::Regex
        } else if has(&["ARCH"]) {
            Kind::Arch
        } else if has(&["QUERY", "SQL"]) {
            Kind::Query
        } else if v.len() <= 2
            || has(&[
                "COUNT", "MS", "HZ", "PAGES", "0-100", "NUM", "SIZE", "DEPTH", "FREQ", "PERCENT",
            ])
        {
            Kind::Number
        } else {
            Kind::Text
        }
    }
}

/// One flag of a subcommand.
#[derive(Clone, Debug)]
pub struct Flag {
    /// `--name` (or `-x` when it has no long form).
    pub spelling: String,
    /// `None` for a switch.
    pub kind: Option<Kind>,
    /// clap's `[possible values: …]`.
    pub choices: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Subcommand {
    pub name: String,
    pub flags: Vec<Flag>,
    /// The positional arguments' kinds, in order.
    pub positionals: Vec<Kind>,
}

/// Every subcommand of the binary at `bin` (its `--help`, then each one's).
pub fn discover(bin: &Path) -> Vec<Subcommand> {
    let top = help(bin, &[]);
    let mut subcommands = Vec::new();
    let mut in_commands = false;
    for line in top.lines() {
        if line.starts_with("Commands:") {
            in_commands = true;
            continue;
        }
        if in_commands {
            let Some(name) = line.strip_prefix("  ").and_then(|l| l.split_whitespace().next()) else {
                break;
            };
            if name != "help" {
                subcommands.push(parse_subcommand(name, &help(bin, &[name])));
            }
        }
    }
    assert!(
        subcommands.len() > 5,
        "{} --help lists no subcommands:\n{top}",
        bin.display()
    );
    subcommands
}

fn help(bin: &Path, args: &[&str]) -> String {
    let out = Command::new(bin)
        .args(args)
        .arg("--help")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The flags and positionals of one subcommand's `--help`.
pub fn parse_subcommand(name: &str, help: &str) -> Subcommand {
    let mut flags: Vec<Flag> = Vec::new();
    let mut positionals = Vec::new();
    let mut section = "";
    for line in help.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            section = line;
            continue;
        }
        let trimmed = line.trim_start();
        match section {
            "Arguments:" if trimmed.starts_with(['<', '[']) => {
                let value = trimmed[1..].split(['>', ']']).next().unwrap_or("");
                positionals.push(Kind::of(value));
            }
            "Options:" if trimmed.starts_with('-') && line.starts_with("  ") && indent(line) <= 6 => {
                if let Some(flag) = parse_flag(trimmed) {
                    flags.push(flag);
                }
            }
            _ => {}
        }
        // `[possible values: a, b]`, on the flag's line or its description's.
        if let (Some(start), Some(flag)) = (line.find("[possible values: "), flags.last_mut()) {
            let list = &line[start + "[possible values: ".len()..];
            let list = list.split(']').next().unwrap_or("");
            flag.choices = list.split(", ").map(str::to_string).collect();
        }
    }
    Subcommand {
        name: name.to_string(),
        flags: flags
            .into_iter()
            .filter(|f| f.spelling != "--help" && f.spelling != "-h")
            .collect(),
        positionals,
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// `-p, --pids <PID,...>  Watch …` → `--pids` taking pids; `--inherit  Also …` → a switch.
fn parse_flag(text: &str) -> Option<Flag> {
    let mut words = text.split_whitespace().peekable();
    let mut spelling = None;
    let mut kind = None;
    while let Some(word) = words.next() {
        let word = word.trim_end_matches(',');
        if let Some(long) = word.strip_prefix("--") {
            spelling = Some(format!("--{}", long.split('=').next().unwrap_or(long)));
        } else if word.starts_with('-') && word.len() == 2 {
            spelling.get_or_insert_with(|| word.to_string());
        } else if word.starts_with('<') {
            let value = word.trim_start_matches('<').split('>').next().unwrap_or("");
            kind = Some(Kind::of(value));
            break;
        } else {
            break;
        }
        if words.peek().is_some_and(|w| !w.starts_with(['-', '<'])) {
            break;
        }
    }
    spelling.map(|spelling| Flag {
        spelling,
        kind,
        choices: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_help_page_gives_flags_kinds_choices_and_positionals() {
        let help = "Usage: perfscope report [OPTIONS] --out <DIR> [QPERF_BIN]

Arguments:
  [QPERF_BIN]  The qperf.bin to analyse

Options:
      --folded <FILE>
          Analyse a folded-stacks file instead of a qperf.bin
  -C, --cpus <LIST>            CPUs to watch: `N`, `A-B`, `A-B,C` (default: all online)
  -p, --pids <PID,...>         Watch every thread of these processes instead of CPUs
      --inherit                Also watch the tasks
      --duration <S>           Stop after this many seconds
      --than <TIME>            Threshold
      --symbol-style <SYMBOL_STYLE>
          How much of each name to show [default: full] [possible values: full, short, module]
  -h, --help
          Print help
";
        let s = parse_subcommand("report", help);
        let got: Vec<(&str, Option<Kind>)> = s.flags.iter().map(|f| (f.spelling.as_str(), f.kind)).collect();
        assert_eq!(
            got,
            [
                ("--folded", Some(Kind::Path)),
                ("--cpus", Some(Kind::Cpus)),
                ("--pids", Some(Kind::Pids)),
                ("--inherit", None),
                ("--duration", Some(Kind::Seconds)),
                ("--than", Some(Kind::Threshold)),
                ("--symbol-style", Some(Kind::Text)),
            ]
        );
        assert_eq!(s.flags[6].choices, ["full", "short", "module"]);
        assert_eq!(s.positionals, [Kind::Path]);
    }
}
