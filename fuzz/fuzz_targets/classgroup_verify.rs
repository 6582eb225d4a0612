//! `vrs_engine::fuzz` target `classgroup_verify`.
//! docs/OPERATIONS.md, "Fuzzing the decoders".
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = vrs_engine::fuzz::run("classgroup_verify", data) {
        panic!("{e}");
    }
});
