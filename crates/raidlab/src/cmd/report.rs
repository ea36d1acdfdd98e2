//! `raidlab report`.

use crate::error::CliError;

#[derive(clap::Args)]
pub struct ReportArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub fn main(_args: ReportArgs) -> Result<(), CliError> {
    Err(CliError::failed("'report' is not built yet"))
}
