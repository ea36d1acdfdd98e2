//! `raidlab`: the command line. Each command family lives in its own module under `cmd/`
//! and turns arguments into calls on the domain crates; nothing here does I/O of its own
//! beyond reading arguments and printing results.

mod cmd;
mod error;

use clap::{Parser, Subcommand};
use error::CliError;

#[derive(Parser)]
#[command(
    name = "raidlab",
    version,
    about = "A storage performance lab: measure, build RAID, simulate, report"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a workload (fio options as --key=value, or --job FILE.fio) against files, block
    /// devices, arrays (array:M1,M2,…) or simulated systems (sim:SYSTEM.toml).
    Run(cmd::run::RunArgs),
    /// Build and manage user-space RAID arrays (create, status, fail, remove, add, rebuild, scrub, serve).
    Array(cmd::array::ArrayArgs),
    /// Micro-benchmarks of raidlab's own kernels (parity, simulator).
    Bench(cmd::bench::BenchArgs),
    /// Run an experiment: a base workload swept over axes, with repetitions, into a database.
    Sweep(cmd::sweep::SweepArgs),
    /// Write an HTML report with figures from a results database.
    Report(cmd::report::ReportArgs),
    /// Print a simulated system's path from host to disks with each component's bound.
    Explain(cmd::explain::ExplainArgs),
}

fn main() {
    let code = match Cli::try_parse() {
        Ok(cli) => match run(cli) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("raidlab: {e}");
                e.code
            }
        },
        Err(e) => match e.kind() {
            clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                print!("{e}");
                0
            }
            _ => {
                // One line: clap's first line says what was wrong; valid values follow it.
                let rendered = e.render().to_string();
                let first = rendered
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("bad arguments");
                let first = first.trim_start_matches("error: ");
                eprintln!("raidlab: {first} (see raidlab --help)");
                2
            }
        },
    };
    std::process::exit(code);
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Run(a) => cmd::run::main(a),
        Command::Array(a) => cmd::array::main(a),
        Command::Bench(a) => cmd::bench::main(a),
        Command::Sweep(a) => cmd::sweep::main(a),
        Command::Report(a) => cmd::report::main(a),
        Command::Explain(a) => cmd::explain::main(a),
    }
}
