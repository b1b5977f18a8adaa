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

fn xmlish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<testsuites>".to_string()),
        Just("<testsuite name=\"s\" time=\"1.5\">".to_string()),
        Just("</testsuite>".to_string()),
        Just("<testcase classname=\"C\" name=\"t/x\" time=\"0,5\">".to_string()),
        Just("<testcase name=\"t\" time=\"-1\"/>".to_string()),
        Just("</testcase>".to_string()),
        Just("<failure/>".to_string()),
        Just("<test-run><test-suite name=\"a\"><test-case name=\"b\" duration=\"1e3\" result=\"Failed\"/>".to_string()),
        Just("<TestRun><Results><UnitTestResult testId=\"1\" testName=\"x\" duration=\"00:00:01.5\" outcome=\"Passed\">".to_string()),
        Just("<InnerResults>".to_string()),
        Just("<UnitTest id=\"1\"><TestMethod className=\"K\" name=\"x\"/></UnitTest>".to_string()),
        Just("<assemblies><assembly name=\"a\"><collection name=\"c\"><test name=\"n\" type=\"T\" time=\"2\" result=\"Pass\"/>".to_string()),
        Just("<!DOCTYPE x [<!ENTITY a \"b\">]>".to_string()),
        Just("&a;".to_string()),
        Just("{\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"T/a\",\"Elapsed\":0.1}\n".to_string()),
        Just("{\"test\":{\"id\":1,\"name\":\"t\",\"suiteID\":0},\"type\":\"testStart\",\"time\":1}\n".to_string()),
        Just("{\"testID\":1,\"result\":\"success\",\"hidden\":false,\"type\":\"testDone\",\"time\":3}\n".to_string()),
        Just("{\"stats\":{\"duration\":3},\"tests\":[{\"fullTitle\":\"a\",\"duration\":1,\"err\":{}}],\"pending\":[]}".to_string()),
        Just("{\"examples\":[{\"full_description\":\"a\",\"status\":\"passed\",\"run_time\":0.1}]}".to_string()),
        Just("TAP version 14\n1..3\n".to_string()),
        Just("ok 1 - a # SKIP\n".to_string()),
        Just("not ok 2 - b # TODO\n".to_string()),
        Just("    ok 1 - child\n".to_string()),
        Just("  ---\n  duration_ms: 3.5\n  type: 'suite'\n  ...\n".to_string()),
        Just("Bail out! x\n".to_string()),
        Just("{\"results\":{\"tool\":{\"name\":\"j\"},\"summary\":{\"tests\":1,\"failed\":2},\"tests\":[{\"name\":\"a\",\"status\":\"failed\",\"duration\":1,\"suite\":[\"x\"]}]}}".to_string()),
        Just("{\"uuid\":\"u\",\"historyId\":\"h\",\"name\":\"t\",\"status\":\"broken\",\"start\":1,\"stop\":0}".to_string()),
        Just("{\"ImportPath\":\"p [p.test]\",\"Action\":\"build-fail\"}\n".to_string()),
        Just("{\"Action\":\"run\",\"Package\":\"p\",\"Test\":\"T\"}\n".to_string()),
        Just("FAIL\tp [build failed]\n".to_string()),
        Just("\u{feff}\u{0}<".to_string()),
        any::<char>().prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..30).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn report_readers_never_panic(text in xmlish()) {
        use tardy::ingest::reports::{Report, allure, dart, gojson, jsondoc, tap, xml};
        let mut r = Report::default();
        let _ = xml::read(text.as_bytes(), "prop", &mut r);
        let mut g = Report::default();
        let _ = gojson::read(text.as_bytes(), "prop", &mut g);
        let _ = dart::read(text.as_bytes(), "prop", &mut g);
        for kind in [jsondoc::Kind::Mocha, jsondoc::Kind::Jest, jsondoc::Kind::RSpec, jsondoc::Kind::Ctrf] {
            let _ = jsondoc::read_slice(text.as_bytes(), kind, "prop", &mut g);
        }
        let _ = tap::read(text.as_bytes(), "prop", &mut g);
        let _ = allure::read(text.as_bytes(), "prop", &mut g);
        let _ = allure::read(text.as_bytes(), "prop", &mut g);
        allure::merge_attempts(&mut g);
        // Every format through the one entry point (sniffed), wide text too.
        let _ = tardy::ingest::reports::read_run_bytes(text.as_bytes(), "prop");
        let wide: Vec<u8> = std::iter::once(0xFEFFu16)
            .chain(text.encode_utf16())
            .flat_map(|u| u.to_le_bytes())
            .collect();
        let _ = tardy::ingest::reports::read_run_bytes(&wide, "prop");
        r.resolve_repeats();
        r.mark_parents();
        let _ = tardy::analyze::suite::diff(&[r.clone()], &[g]);
        let _ = tardy::analyze::suite::show(&r, 5);
    }
}
