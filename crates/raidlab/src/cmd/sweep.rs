//! `raidlab sweep`.

use crate::error::CliError;

#[derive(clap::Args)]
pub struct SweepArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub fn main(_args: SweepArgs) -> Result<(), CliError> {
    Err(CliError::failed("'sweep' is not built yet"))
}
