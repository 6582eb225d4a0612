//! `vrs_testkit::fuzz::x402_header`.
//! docs/OPERATIONS.md, "Fuzzing the decoders".
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = vrs_testkit::fuzz::x402_header(data) {
        panic!("{e}");
    }
});
