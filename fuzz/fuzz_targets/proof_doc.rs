//! `vrs_testkit::fuzz::proof_doc`.
//! docs/OPERATIONS.md, "Fuzzing the decoders".
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = vrs_testkit::fuzz::proof_doc(data) {
        panic!("{e}");
    }
});
