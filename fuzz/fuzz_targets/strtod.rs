//! strtod never panics and never claims more bytes than it was given.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|s: &str| {
    let (_, used) = tardy::ingest::cnum::strtod(s);
    assert!(used <= s.len() && s.is_char_boundary(used));
});
