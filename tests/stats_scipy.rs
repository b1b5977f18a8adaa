//! tardy's p-values against scipy's on the committed table
//! (tests/data/scipy_pvalues.json, made by tests/data/make_scipy_table.py).

use serde_json::Value;
use tardy::stats::{ttest, utest};

fn cases() -> Vec<Value> {
    let text = include_str!("data/scipy_pvalues.json");
    let v: Value = serde_json::from_str(text).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn close(name: &str, what: &str, ours: f64, theirs: f64) {
    assert!(
        (ours - theirs).abs() < 1e-9,
        "{name}: {what} tardy {ours} scipy {theirs}"
    );
}

#[test]
fn t_tests_match_scipy() {
    for c in cases() {
        let (a, b, name) = (
            floats(&c["a"]),
            floats(&c["b"]),
            c["name"].as_str().unwrap(),
        );
        close(
            name,
            "student",
            ttest::student(&a, &b, 0.95).unwrap().p_value,
            c["student_p"].as_f64().unwrap(),
        );
        close(
            name,
            "welch",
            ttest::welch(&a, &b, 0.95).unwrap().p_value,
            c["welch_p"].as_f64().unwrap(),
        );
    }
}

#[test]
fn mann_whitney_matches_scipy() {
    let mut exact = 0;
    for c in cases() {
        let (a, b, name) = (
            floats(&c["a"]),
            floats(&c["b"]),
            c["name"].as_str().unwrap(),
        );
        let asym = utest::mann_whitney(&a, &b, Some(utest::Method::Asymptotic)).unwrap();
        close(
            name,
            "asymptotic",
            asym.p_value,
            c["mwu_asymptotic_p"].as_f64().unwrap(),
        );
        // tardy computes the exact distribution up to utest::EXACT_MAX per side.
        if let Some(p) = c["mwu_exact_p"]
            .as_f64()
            .filter(|_| a.len().max(b.len()) <= utest::EXACT_MAX)
        {
            let ex = utest::mann_whitney(&a, &b, Some(utest::Method::Exact)).unwrap();
            close(name, "exact", ex.p_value, p);
            exact += 1;
        }
    }
    assert!(exact >= 10);
}
