//! `vrs`: the verifiable randomness service and its command-line tools.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = vrs::cli::Cli::parse();
    match vrs::cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
