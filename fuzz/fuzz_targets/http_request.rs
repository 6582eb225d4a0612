//! `vrs_testkit::fuzz::http_request` through the real router.
//! docs/OPERATIONS.md, "Fuzzing the decoders".
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let h = vrs_testkit::fuzz::Harness::shared().expect("the service starts in process");
    if let Err(e) = vrs_testkit::fuzz::http_request(h, data) {
        panic!("{e}");
    }
});
