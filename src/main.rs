//! The perfscope command line: parses arguments and hands them to the library.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use perfscope::cli::host_commands::{self, HostCommand};
use perfscope::cli::qemu_command::{self, QemuArgs};
use perfscope::cli::recorded_commands::{self, DiffArgs, OpenArgs, ReportArgs, SqlArgs};

#[derive(Parser)]
#[command(
    name = "perfscope",
    version,
    about = "Live terminal-UI profiler for QEMU guest kernels and Linux hosts"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
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
    /// Query a recorded session (`--record FILE.db`) with SQL; prints perf-prof's sql tables.
    Sql(SqlArgs),
    #[command(flatten)]
    Host(HostCommand),
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Report(a) => recorded_commands::run_report(a),
        Command::Diff(a) => recorded_commands::run_diff(a),
        Command::Open(a) => recorded_commands::run_open(a),
        Command::Qemu(a) => qemu_command::run_qemu(a),
        Command::Host(command) => host_commands::run(command),
        Command::Sql(a) => recorded_commands::run_sql(a),
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perfscope: {e:#}");
            ExitCode::FAILURE
        }
    }
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
