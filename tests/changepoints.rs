//! tardy's change points equal Apache Otava 0.8's, index for index, on the
//! corpus `bench/otava_compare.py` generated with Otava itself
//! (`tests/data/changepoints/corpus.json`): steps, ramps, outliers, noise
//! levels, ties, short and constant series, and the series Otava's own tests
//! use (TigerBeetle, the 20-point step), under several option sets, full and
//! incremental (the last 20% appended to the weak points of the first 80%).

use serde_json::Value;
use tardy::stats::changepoint::{Options, detect, detect_appended};

fn indices(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect()
}

#[test]
fn change_points_equal_otava_on_the_whole_corpus() {
    let text = std::fs::read_to_string("tests/data/changepoints/corpus.json").unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let series = doc["series"].as_object().unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() > 200);
    let mut failures = Vec::new();
    let mut found = 0;
    for case in cases {
        let name = case["series"].as_str().unwrap();
        let values: Vec<f64> = series[name]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let o = &case["options"];
        let opts = Options {
            window: o["window"].as_u64().unwrap() as usize,
            max_pvalue: o["p"].as_f64().unwrap(),
            min_magnitude: o["magnitude"].as_f64().unwrap(),
        };
        let got = detect(&values, &opts);
        let cps: Vec<usize> = got.change_points.iter().map(|c| c.index).collect();
        found += cps.len();
        if cps != indices(&case["change_points"]) || got.weak != indices(&case["weak"]) {
            failures.push(format!(
                "{name} {o}: tardy {cps:?} weak {:?}, otava {} weak {}",
                got.weak, case["change_points"], case["weak"]
            ));
        }
        if let Some(inc) = case.get("incremental") {
            let prefix = inc["prefix"].as_u64().unwrap() as usize;
            let weak0 = indices(&inc["prefix_weak"]);
            assert_eq!(
                detect(&values[..prefix], &opts).weak,
                weak0,
                "{name} {o} prefix"
            );
            let got = detect_appended(&values, &opts, values.len() - prefix, &weak0);
            let cps: Vec<usize> = got.change_points.iter().map(|c| c.index).collect();
            if cps != indices(&inc["change_points"]) || got.weak != indices(&inc["weak"]) {
                failures.push(format!(
                    "{name} {o} incremental: tardy {cps:?}, otava {}",
                    inc["change_points"]
                ));
            }
        }
    }
    assert!(found > 100, "the corpus should have change points to find");
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn otava_tigerbeetle_known_answers() {
    // tests/tigerbeetle_test.py in apache/otava: window 30, p 0.01, magnitude 0.05 -> [15, 71].
    let text = std::fs::read_to_string("tests/data/changepoints/corpus.json").unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let values: Vec<f64> = doc["series"]["otava-tigerbeetle"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let run = |p: f64, m: f64| -> Vec<usize> {
        let opts = Options {
            window: 30,
            max_pvalue: p,
            min_magnitude: m,
        };
        detect(&values, &opts)
            .change_points
            .iter()
            .map(|c| c.index)
            .collect()
    };
    assert_eq!(run(0.01, 0.05), vec![15, 71]);
    assert_eq!(run(0.1, 0.05), vec![10, 11, 15, 71, 363]);
    assert_eq!(
        run(0.001, 0.0),
        vec![15, 61, 71, 95, 117, 131, 142, 148, 192, 212, 260]
    );
    assert_eq!(run(0.00001, 0.0), vec![71, 95, 131, 192, 212]);
}
