//! `vrs_engine::fuzz` target `vdf_verify_encoded`.
//! docs/OPERATIONS.md, "Fuzzing the decoders".
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = vrs_engine::fuzz::run("vdf_verify_encoded", data) {
        panic!("{e}");
    }
});
