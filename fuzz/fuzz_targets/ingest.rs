//! Every input reader on arbitrary text, auto-detected and forced: errors are
//! fine, panics are not.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tardy::ingest::{Format, NumberOptions, read_text};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let opts = NumberOptions::default();
    for format in [
        Format::Auto,
        Format::Tardy,
        Format::Hyperfine,
        Format::Numbers,
        Format::Go,
        Format::PytestBenchmark,
        Format::Criterion,
    ] {
        let _ = read_text(text, "fuzz", format, &opts);
    }
});
