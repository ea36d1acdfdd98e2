//! `raidlab explain SYSTEM.toml[#LUN] [--output-format text|json]`: a simulated system's path
//! from host to drives with each component's theoretical bound, and the read and write bounds
//! per LUN and for all LUNs together. Only components on a LUN's path are listed: those of the LUN given, or
//! of the LUNs a run of the whole system drives.

use crate::error::CliError;

#[derive(clap::Args)]
pub struct ExplainArgs {
    /// System description file (TOML), e.g. systems/llnl2000/fig16.toml (a `sim:` prefix is accepted).
    system: String,
    /// text (default) or json.
    #[arg(long = "output-format", default_value = "text")]
    output_format: String,
}

pub fn main(args: ExplainArgs) -> Result<(), CliError> {
    // `PATH#LUN` goes to the simulator whole: it checks the LUN and explains that LUN.
    let path = std::path::PathBuf::from(args.system.strip_prefix("sim:").unwrap_or(&args.system));
    let err = CliError::sim;
    match args.output_format.as_str() {
        "text" => crate::stdout::print(&raidlab_sim::explain(&path).map_err(err)?),
        "json" => {
            let b = raidlab_sim::bounds(&path).map_err(err)?;
            let v: Vec<serde_json::Value> = b
                .iter()
                .map(|c| {
                    // Unbounded (a parity engine's reads, a path stage that sets no write rate):
                    // null.
                    let rate = |x: f64| {
                        if x.is_finite() {
                            serde_json::json!(x)
                        } else {
                            serde_json::Value::Null
                        }
                    };
                    serde_json::json!({
                        "name": c.name,
                        "kind": c.kind,
                        "bound_bytes_s": rate(c.bound_bytes_s),
                        "outer_bound_bytes_s": rate(c.outer_bytes_s),
                        "note": c.note,
                        "write_bound_bytes_s": rate(c.write_bytes_s),
                        "write_outer_bound_bytes_s": rate(c.write_outer_bytes_s),
                        "write_peak_bytes_s": rate(c.write_peak_bytes_s),
                        "write_note": c.write_note,
                    })
                })
                .collect();
            let json = serde_json::to_string_pretty(
                &serde_json::json!({ "system": path.display().to_string(), "components": v }),
            )
            .map_err(|e| CliError::failed(format!("explain: encoding JSON: {e}")))?;
            crate::stdout::print(&format!("{json}\n"))
        }
        other => Err(CliError::usage(format!(
            "--output-format '{other}' is not known (valid: text, json)"
        ))),
    }
}
