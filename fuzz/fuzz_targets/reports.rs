//! The test-report readers (XML dialects, go test -json, Dart's JSON reporter, mocha/jest/RSpec
//! JSON) on arbitrary bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tardy::ingest::reports::{Report, dart, gojson, jsondoc, xml};

fuzz_target!(|data: &[u8]| {
    let mut r = Report::default();
    let _ = xml::read(data, "fuzz", &mut r);
    let mut r = Report::default();
    let _ = gojson::read(data, "fuzz", &mut r);
    let _ = dart::read(data, "fuzz", &mut r);
    for kind in [jsondoc::Kind::Mocha, jsondoc::Kind::Jest, jsondoc::Kind::RSpec] {
        let _ = jsondoc::read(data, kind, "fuzz", &mut r);
    }
    r.resolve_repeats();
    r.mark_parents();
});
