//! Number files with arbitrary columns and delimiters, by both rule sets.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tardy::ingest::{NumberOptions, numbers};

fuzz_target!(|input: (u8, String, String)| {
    let (column, delimiters, text) = input;
    if delimiters.is_empty() {
        return;
    }
    let opts = NumberOptions {
        column: column as usize % 8 + 1,
        delimiters,
    };
    let _ = numbers::read_strict(&text, &opts);
    let _ = numbers::read_lenient(&text, "fuzz", &opts);
});
