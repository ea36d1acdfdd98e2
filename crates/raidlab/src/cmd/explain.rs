//! `raidlab explain`.

use crate::error::CliError;

#[derive(clap::Args)]
pub struct ExplainArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub fn main(_args: ExplainArgs) -> Result<(), CliError> {
    Err(CliError::failed("'explain' is not built yet"))
}
