//! The test-report readers (XML dialects and go test -json) on arbitrary bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tardy::ingest::reports::{Report, gojson, xml};

fuzz_target!(|data: &[u8]| {
    let mut r = Report::default();
    let _ = xml::read(data, "fuzz", &mut r);
    let mut r = Report::default();
    let _ = gojson::read(data, "fuzz", &mut r);
    r.merge_duplicates();
    r.mark_parents();
});
