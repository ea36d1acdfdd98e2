//! `raidlab bench`.

use crate::error::CliError;

#[derive(clap::Args)]
pub struct BenchArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub fn main(_args: BenchArgs) -> Result<(), CliError> {
    Err(CliError::failed("'bench' is not built yet"))
}
