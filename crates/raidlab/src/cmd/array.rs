//! `raidlab array`.

use crate::error::CliError;

#[derive(clap::Args)]
pub struct ArrayArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub fn main(_args: ArrayArgs) -> Result<(), CliError> {
    Err(CliError::failed("'array' is not built yet"))
}
