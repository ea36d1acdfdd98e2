//! `raidlab run`.

use crate::error::CliError;

#[derive(clap::Args)]
pub struct RunArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub fn main(_args: RunArgs) -> Result<(), CliError> {
    Err(CliError::failed("'run' is not built yet"))
}
