//! The perfscope command line: parses arguments and hands them to the library.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use perfscope::cli::exit::{self, Outcome};
use perfscope::cli::host_commands::{self, HostCommand};
use perfscope::cli::qemu_command::{self, QemuArgs};
use perfscope::cli::recorded_commands::{self, DiffArgs, OpenArgs, ReportArgs, SqlArgs};

#[derive(Parser)]
#[command(
    name = "perfscope",
    version,
    about = "Live terminal-UI profiler for QEMU guest kernels and Linux hosts",
    after_help = "Exit codes: 0 clean, 1 error, 2 usage, 3 finished but incomplete \
                  (corrupt or truncated input, lost events, QEMU killed, a recording that \
                  missed rows, an ELF that does not match the samples)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Deferred: each subcommand's arguments are built only when it is the one invoked, not
// the whole tree at every start (which cost ~0.7 MB of heap and ~1 MB of touched code).
#[derive(Subcommand)]
#[command(defer = true)]
enum Command {
    /// Write the full artifact set (folded, SVG, HTML, pprof, reports) for a recorded profile.
    Report(ReportArgs),
    /// Compare two profiles: top changed functions and a differential flamegraph.
    Diff(DiffArgs),
    /// Explore a recorded profile in the terminal UI (qperf.bin with --elf, or folded).
    Open(OpenArgs),
    /// Run a guest kernel in QEMU with the sampling plugin: live console, hotspots and
    /// flamegraph, the workload window between markers, and the full artifact set.
    Qemu(QemuArgs),
    /// Query a recorded session (`sql FILE.db QUERY`, from `--record FILE.db`) with SQL, or
    /// run perf-prof's live sql (`sql -e EVENT,... -i MS --query 'SELECT ...'`).
    Sql(SqlArgs),
    #[command(flatten)]
    Host(HostCommand),
}

fn run(cli: Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Report(a) => recorded_commands::run_report(a),
        Command::Diff(a) => recorded_commands::run_diff(a),
        Command::Open(a) => recorded_commands::run_open(a),
        Command::Qemu(a) => qemu_command::run_qemu(a),
        Command::Host(command) => host_commands::run(command),
        Command::Sql(a) => recorded_commands::run_sql(a),
    }
}

/// Exit codes (the table is in `perfscope::cli::exit` and the README): 0 clean, 1 error,
/// 2 usage (clap exits with it while parsing), 3 finished but incomplete.
fn main() -> ExitCode {
    exit::exit_code(run(Cli::parse()))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        // clap checks unique names, valid defaults and conflicts only when asked.
        super::Cli::command().debug_assert();
    }
}
