//! `vrs`: the verifiable randomness service and its command-line tools.

use clap::Parser;
use std::process::ExitCode;

/// jemalloc keeps the resident set of a long-running server flat where glibc's malloc let it
/// creep up (docs/PERFORMANCE.md, Soak); feature `jemalloc`, on by default.
#[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

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
