//! Property tests: every parser on arbitrary input returns a value or an
//! error, never panics (the cargo-fuzz targets in fuzz/ go deeper).

use proptest::prelude::*;
use tardy::ingest::{Format, NumberOptions, cnum::strtod, numbers, read_text};

const FORMATS: [Format; 7] = [
    Format::Auto,
    Format::Tardy,
    Format::Hyperfine,
    Format::Numbers,
    Format::Go,
    Format::PytestBenchmark,
    Format::Criterion,
];

/// Text built from the pieces real inputs are made of, so mutations reach deep.
fn texty() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("{".to_string()),
        Just("}".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("\"results\":".to_string()),
        Just("\"times\":".to_string()),
        Just("\"schema\":\"tardy.results\",".to_string()),
        Just("\"benchmarks\":".to_string()),
        Just("\"stats\":{\"data\":".to_string()),
        Just("\"iters\":[1,2],\"times\":".to_string()),
        Just("BenchmarkX-8 ".to_string()),
        Just(" ns/op ".to_string()),
        Just("\n".to_string()),
        Just("\t".to_string()),
        Just("#".to_string()),
        Just(",".to_string()),
        "[-+]?[0-9]{0,4}(\\.[0-9]{0,3})?(e[-+]?[0-9]{1,3})?",
        Just("nan".to_string()),
        Just("inf".to_string()),
        Just("0x1p3".to_string()),
        any::<char>().prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn readers_never_panic(text in texty()) {
        let opts = NumberOptions::default();
        for f in FORMATS {
            let _ = read_text(&text, "prop", f, &opts);
        }
    }

    #[test]
    fn number_rules_never_panic(text in texty(), column in 1usize..5, delims in "[ ,;\t:]{1,3}") {
        let opts = NumberOptions { column, delimiters: delims };
        let _ = numbers::read_strict(&text, &opts);
        let _ = numbers::read_lenient(&text, "prop", &opts);
    }

    #[test]
    fn strtod_stays_in_bounds(s in ".{0,30}") {
        let (_, used) = strtod(&s);
        prop_assert!(used <= s.len() && s.is_char_boundary(used));
    }

    #[test]
    fn strtod_agrees_with_rust_on_plain_decimals(v in proptest::num::f64::NORMAL) {
        let s = format!("{v}");
        prop_assert_eq!(strtod(&s), (v, s.len()));
    }
}
