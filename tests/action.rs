//! The GitHub Action (`action.yml`, composite) runs here as a runner would run it: the
//! file is parsed (PyYAML), each step's `${{ }}` expressions are filled in from the inputs,
//! its `if:` is evaluated, and its script runs with bash, with the runner's files
//! (`GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`, `RUNNER_TEMP`) in a scratch directory. Only
//! the install step's `cargo install` is left out: the action is given this build.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn action() -> Option<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml");
    let out = Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
        ])
        .arg(&path)
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "SKIPPED: python3 with PyYAML is needed to read action.yml: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    Some(serde_json::from_slice(&out.stdout).expect("action.yml parses as YAML"))
}

/// `${{ inputs.x }}`, `${{ steps.install.outputs.tardy }}`, `${{ github.action_path }}`.
fn fill(text: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = text.to_string();
    while let Some(i) = out.find("${{") {
        let j = out[i..]
            .find("}}")
            .map(|j| i + j)
            .expect("closed expression");
        let key = out[i + 3..j].trim().to_string();
        let value = vars
            .get(&key)
            .unwrap_or_else(|| panic!("unknown expression {key}"));
        out.replace_range(i..j + 2, value);
    }
    out
}

/// The `if:` conditions action.yml uses: `inputs.x != ''` joined by `&&`.
fn holds(cond: &str, vars: &BTreeMap<String, String>) -> bool {
    cond.split("&&").all(|c| {
        let name = c
            .trim()
            .strip_suffix("!= ''")
            .unwrap_or_else(|| panic!("unsupported condition {c}"))
            .trim();
        vars.get(name).is_some_and(|v| !v.is_empty())
    })
}

#[test]
fn the_action_measures_compares_reports_and_fails_on_a_slowdown() {
    let Some(action) = action() else { return };
    assert_eq!(action["runs"]["using"], "composite");
    let d = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let summary = d.path().join("summary.md");
    let output = d.path().join("output");
    std::fs::write(&output, "").unwrap();
    let tardy = assert_cmd::cargo::cargo_bin("tardy");
    let mut vars = BTreeMap::new();
    let data = |f: &str| repo.join("examples/data").join(f).display().to_string();
    for (k, v) in [
        (
            "inputs.run",
            "--runs 3 -n ten -n twenty 'sleep 0.01' 'sleep 0.02'".to_string(),
        ),
        ("inputs.tests-before", data("nunit-story-before.xml")),
        ("inputs.tests-after", data("nunit-story-after.xml")),
        ("inputs.fail-if-slower", "50".into()),
        ("inputs.tardy", tardy.display().to_string()),
        ("github.action_path", repo.display().to_string()),
    ] {
        vars.insert(k.to_string(), v);
    }
    // Every input the action declares is one the test gives.
    for name in action["inputs"].as_object().unwrap().keys() {
        assert!(vars.contains_key(&format!("inputs.{name}")), "{name}");
    }
    let mut codes = Vec::new();
    for step in action["runs"]["steps"].as_array().unwrap() {
        if let Some(cond) = step["if"].as_str() {
            assert!(holds(cond, &vars), "{cond}");
        }
        let mut cmd = Command::new("bash");
        cmd.args(["-e", "-c", step["run"].as_str().unwrap()])
            .current_dir(d.path())
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("RUNNER_TEMP", d.path());
        for (k, v) in step["env"].as_object().into_iter().flatten() {
            cmd.env(k, fill(v.as_str().unwrap(), &vars));
        }
        let out = cmd.output().unwrap();
        codes.push(out.status.code());
        eprintln!(
            "step {}: {:?}\n{}",
            step["name"],
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        // Outputs written by a step are what later steps read.
        for line in std::fs::read_to_string(&output).unwrap().lines() {
            if let Some((k, v)) = line.split_once('=') {
                let id = step["id"].as_str().unwrap_or("");
                vars.insert(format!("steps.{id}.outputs.{k}"), v.to_string());
            }
        }
    }
    // Install (given a binary), run, and a tests diff that fails: +1279% > 50%.
    assert_eq!(codes, [Some(0), Some(0), Some(1)]);
    assert_eq!(
        vars["steps.install.outputs.tardy"],
        tardy.display().to_string()
    );
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.contains("### tardy run\n\n| Command | Mean ["), "{md}");
    assert!(md.contains("| `ten` |"), "{md}");
    assert!(md.contains("### tardy tests diff"), "{md}");
    assert!(
        md.contains("15.6 ms"),
        "the shape diagnosis is in the summary: {md}"
    );
}
