//! `raidlab`: the command line. Each command family lives in its own module under `cmd/`
//! and turns arguments into calls on the domain crates; nothing here does I/O of its own
//! beyond reading arguments and printing results.

// The doc comments of the clap structs are the command line's help text, written for a
// terminal: `[[disk]]`, `[limits]` and `<name>` there are TOML tables and placeholders, not
// rustdoc links or HTML (escaping them would show the escapes in `--help`).
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod cmd;
mod error;
mod stdout;

use clap::{Parser, Subcommand};
use error::CliError;
use raidlab_engine::ewriteln;

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
    /// Measure a drive (device, file or sim:SYSTEM.toml#LUN) with read-only probes and print
    /// a [[disk]] description of it for the simulator.
    Calibrate(cmd::calibrate::CalibrateArgs),
    /// Print a simulated system's path from host to disks with each component's bound.
    Explain(cmd::explain::ExplainArgs),
}

fn main() {
    let code = match Cli::try_parse() {
        Ok(cli) => match run(cli) {
            Ok(()) => 0,
            Err(e) => {
                // One line per error (a system file's checking pass gives all it found).
                for line in e.message.lines() {
                    ewriteln!("raidlab: {line}");
                }
                e.code
            }
        },
        Err(e) => match e.kind() {
            clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                // As every command's output: a closed pipe (`| head`) is exit 0, a full disk
                // one line and exit 1. (print! panicked on both; clap's own `e.exit()` does
                // not panic but ignores a full disk too.)
                match stdout::print(&e.to_string()) {
                    Ok(()) => 0,
                    Err(e) => {
                        ewriteln!("raidlab: {e}");
                        e.code
                    }
                }
            }
            _ => {
                ewriteln!("raidlab: {}", clap_one_line(&e));
                2
            }
        },
    };
    std::process::exit(code);
}

/// A clap error as one line, for every command: what was wrong with its details (the
/// missing arguments, the valid values, clap's tip), and the help to read.
fn clap_one_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let rendered = e.render().to_string();
    // The command the error is about, from clap's usage line: `raidlab report`.
    let command = rendered
        .lines()
        .find_map(|l| l.trim().strip_prefix("Usage:"))
        .map(|u| {
            u.split_whitespace()
                .take_while(|w| !w.starts_with(['-', '<', '[']))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "raidlab".into());
    let missing = match (e.kind(), e.get(ContextKind::InvalidArg)) {
        (ErrorKind::MissingRequiredArgument, Some(ContextValue::Strings(args)))
            if !args.is_empty() =>
        {
            Some(args.join(", "))
        }
        (ErrorKind::MissingRequiredArgument, Some(ContextValue::String(arg))) => Some(arg.clone()),
        _ => None,
    };
    // `raidlab report` → `report: ` in front of the message (the line starts with `raidlab:`).
    let which = command
        .strip_prefix("raidlab")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(|c| format!("{c}: "))
        .unwrap_or_default();
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        // The command's help would follow; one line names what may come next instead.
        let subcommands: Vec<&str> = rendered
            .lines()
            .skip_while(|l| l.trim() != "Commands:")
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .filter_map(|l| l.split_whitespace().next())
            .filter(|c| *c != "help")
            .collect();
        if !subcommands.is_empty() {
            return format!(
                "{which}missing a command (valid: {}; see {command} --help)",
                subcommands.join(", ")
            );
        }
    }
    let what = match missing {
        Some(args) => format!("{which}missing required arguments: {args}"),
        None => {
            // clap's message and its details (valid values, tips), without the usage and
            // the pointer to --help, which follows.
            let mut parts: Vec<String> = Vec::new();
            for l in rendered.lines() {
                let t = l.trim();
                if t.starts_with("Usage:") || t.starts_with("For more information") {
                    break;
                }
                if !t.is_empty() {
                    parts.push(t.trim_start_matches("error: ").to_string());
                }
            }
            if parts.is_empty() {
                "bad arguments".into()
            } else {
                parts.join("; ")
            }
        }
    };
    format!("{what} (see {command} --help)")
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Run(a) => cmd::run::main(a),
        Command::Array(a) => cmd::array::main(a),
        Command::Bench(a) => cmd::bench::main(a),
        Command::Sweep(a) => cmd::sweep::main(a),
        Command::Report(a) => cmd::report::main(a),
        Command::Explain(a) => cmd::explain::main(a),
        Command::Calibrate(a) => cmd::calibrate::main(a),
    }
}
