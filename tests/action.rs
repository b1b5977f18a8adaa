//! The GitHub Action (`action.yml`, composite) runs here as a runner would run it: the
//! file is parsed (PyYAML), each step's `${{ }}` expressions are filled in from the inputs,
//! its `if:` is evaluated, and its script runs with bash, with the runner's files
//! (`GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`, `RUNNER_TEMP`) in a scratch directory. Only
//! the install step's `cargo install` is left out: the action is given this build.

mod common;
use common::git;

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
        // A skipped step's outputs are empty, as on a runner.
        let empty = String::new();
        let value = vars.get(&key).unwrap_or_else(|| {
            assert!(key.starts_with("steps."), "unknown expression {key}");
            &empty
        });
        out.replace_range(i..j + 2, &value.clone());
    }
    out
}

/// The `if:` conditions action.yml uses: `inputs.x != ''` joined by `&&`.
fn holds(cond: &str, vars: &BTreeMap<String, String>) -> bool {
    cond.split("&&").all(|c| {
        let set = |name: &str| vars.get(name.trim()).is_some_and(|v| !v.is_empty());
        match (
            c.trim().strip_suffix("!= ''"),
            c.trim().strip_suffix("== ''"),
        ) {
            (Some(name), _) => set(name),
            (_, Some(name)) => !set(name),
            _ => panic!("unsupported condition {c}"),
        }
    })
}

/// A step's name and exit code (`None`: skipped by its `if:`).
type Ran = (String, Option<i32>);

/// Run the action's steps as a runner would, in `cwd`, with `env` besides the
/// runner's files; a step whose `if:` does not hold is skipped. Returns each
/// step's name and exit code (`None` when skipped), and the variables after.
fn run_steps(
    action: &Value,
    mut vars: BTreeMap<String, String>,
    cwd: &Path,
    runner: &Path,
    env: &[(&str, String)],
) -> (Vec<Ran>, BTreeMap<String, String>) {
    let summary = runner.join("summary.md");
    let output = runner.join("output");
    std::fs::write(&output, "").unwrap();
    // Every input the action declares is one the test gives.
    for name in action["inputs"].as_object().unwrap().keys() {
        assert!(vars.contains_key(&format!("inputs.{name}")), "{name}");
    }
    let mut codes = Vec::new();
    for step in action["runs"]["steps"].as_array().unwrap() {
        let name = step["name"].as_str().unwrap_or("").to_string();
        if let Some(cond) = step["if"].as_str()
            && !holds(cond, &vars)
        {
            codes.push((name, None));
            continue;
        }
        // Another action (actions/cache): the runner's, not run here.
        if step.get("uses").is_some() {
            codes.push((name, None));
            continue;
        }
        std::fs::write(&output, "").unwrap();
        let mut cmd = Command::new("bash");
        cmd.args(["-e", "-c", step["run"].as_str().unwrap()])
            .current_dir(cwd)
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("RUNNER_TEMP", runner)
            .env("GIT_CEILING_DIRECTORIES", cwd.parent().unwrap_or(cwd));
        for (k, v) in env {
            cmd.env(k, v);
        }
        for (k, v) in step["env"].as_object().into_iter().flatten() {
            cmd.env(k, fill(v.as_str().unwrap(), &vars));
        }
        let out = cmd.output().unwrap();
        eprintln!(
            "step {name}: {:?}\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        codes.push((name, out.status.code()));
        // Outputs written by a step are what later steps read.
        for line in std::fs::read_to_string(&output).unwrap().lines() {
            if let Some((k, v)) = line.split_once('=') {
                let id = step["id"].as_str().unwrap_or("");
                vars.insert(format!("steps.{id}.outputs.{k}"), v.to_string());
            }
        }
        if out.status.code() != Some(0) {
            break;
        }
    }
    (codes, vars)
}

fn inputs(given: &[(&str, String)]) -> BTreeMap<String, String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tardy = assert_cmd::cargo::cargo_bin("tardy");
    let mut vars = BTreeMap::new();
    for name in [
        "run",
        "tests-before",
        "tests-after",
        "fail-if-slower",
        "ci",
        "comment",
        "comment-file",
        "pr-number",
        "push",
        "push-files",
        "push-token",
        "github-token",
    ] {
        vars.insert(format!("inputs.{name}"), String::new());
    }
    vars.insert("inputs.tardy".into(), tardy.display().to_string());
    vars.insert("github.action_path".into(), repo.display().to_string());
    vars.insert("github.action_repository".into(), String::new());
    vars.insert("github.action_ref".into(), "main".into());
    for (k, v) in given {
        vars.insert(format!("inputs.{k}"), v.clone());
    }
    vars
}

/// The steps that get tardy (which version, the released binary, the
/// cache), checked in their own test.
const GETTING_TARDY: [&str; 3] = [
    "Which tardy",
    "Download the released tardy",
    "Cache the built tardy",
];

fn ran(codes: &[Ran]) -> Vec<Option<i32>> {
    codes
        .iter()
        .filter(|(name, _)| !GETTING_TARDY.contains(&name.as_str()))
        .map(|(_, c)| *c)
        .collect()
}

#[test]
fn the_action_measures_compares_reports_and_fails_on_a_slowdown() {
    let Some(action) = action() else { return };
    assert_eq!(action["runs"]["using"], "composite");
    let d = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tardy = assert_cmd::cargo::cargo_bin("tardy");
    let data = |f: &str| repo.join("examples/data").join(f).display().to_string();
    let vars = inputs(&[
        (
            "run",
            "--runs 3 -n ten -n twenty 'sleep 0.01' 'sleep 0.02'".to_string(),
        ),
        ("tests-before", data("nunit-story-before.xml")),
        ("tests-after", data("nunit-story-after.xml")),
        ("fail-if-slower", "50".into()),
    ]);
    let (codes, vars) = run_steps(&action, vars, d.path(), d.path(), &[]);
    // Install (given a binary), run, and a tests diff that fails: +1279% > 50%.
    assert_eq!(ran(&codes)[..3], [Some(0), Some(0), Some(1)], "{codes:?}");
    assert_eq!(
        vars["steps.install.outputs.tardy"],
        tardy.display().to_string()
    );
    let md = std::fs::read_to_string(d.path().join("summary.md")).unwrap();
    assert!(md.contains("### tardy run\n\n| Command | Mean ["), "{md}");
    assert!(md.contains("| `ten` |"), "{md}");
    assert!(md.contains("### tardy tests diff"), "{md}");
    assert!(
        md.contains("15.6 ms"),
        "the shape diagnosis is in the summary: {md}"
    );
}

/// GitHub's issue-comment endpoints, as far as `tardy comment` uses them:
/// list, create, edit; a token other than `secret` may read but not write.
struct MockGitHub {
    url: String,
    comments: std::sync::Arc<std::sync::Mutex<Vec<(u64, String)>>>,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

fn mock_github() -> MockGitHub {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let comments = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(u64, String)>::new()));
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (c2, l2) = (comments.clone(), log.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (comments, log) = (c2.clone(), l2.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut parts = line.split_whitespace();
                    let (method, path) = (
                        parts.next().unwrap_or("").to_string(),
                        parts.next().unwrap_or("").to_string(),
                    );
                    let (mut len, mut auth) = (0usize, String::new());
                    loop {
                        let mut h = String::new();
                        reader.read_line(&mut h).unwrap();
                        let h = h.trim_end();
                        if h.is_empty() {
                            break;
                        }
                        let (k, v) = h.split_once(':').unwrap_or((h, ""));
                        match k.to_ascii_lowercase().as_str() {
                            "content-length" => len = v.trim().parse().unwrap_or(0),
                            "authorization" => auth = v.trim().to_string(),
                            _ => {}
                        }
                    }
                    let mut body = vec![0; len];
                    reader.read_exact(&mut body).unwrap();
                    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    log.lock().unwrap().push(format!("{method} {path}"));
                    let mut list = comments.lock().unwrap();
                    let (status, answer) = if !auth.starts_with("Bearer ") {
                        (
                            401,
                            serde_json::json!({"message": "Requires authentication"}),
                        )
                    } else if method != "GET" && auth != "Bearer secret" {
                        (
                            403,
                            serde_json::json!({"message": "Resource not accessible by integration"}),
                        )
                    } else if method == "GET" && path.starts_with("/repos/o/r/issues/7/comments") {
                        let all: Vec<Value> = list
                            .iter()
                            .map(|(id, b)| serde_json::json!({"id": id, "body": b}))
                            .collect();
                        (200, Value::Array(all))
                    } else if method == "POST" && path == "/repos/o/r/issues/7/comments" {
                        let id = 1000 + list.len() as u64;
                        list.push((id, body["body"].as_str().unwrap_or("").to_string()));
                        (201, serde_json::json!({"id": id}))
                    } else if let Some(id) = path
                        .strip_prefix("/repos/o/r/issues/comments/")
                        .and_then(|i| i.parse::<u64>().ok())
                        .filter(|_| method == "PATCH")
                    {
                        match list.iter_mut().find(|(i, _)| *i == id) {
                            Some(c) => {
                                c.1 = body["body"].as_str().unwrap_or("").to_string();
                                (200, serde_json::json!({"id": id}))
                            }
                            None => (404, serde_json::json!({"message": "Not Found"})),
                        }
                    } else {
                        (404, serde_json::json!({"message": "Not Found"}))
                    };
                    drop(list);
                    let text = answer.to_string();
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}",
                        text.len()
                    );
                }
            });
        }
    });
    MockGitHub { url, comments, log }
}

#[test]
fn a_pull_request_is_measured_against_its_merge_base_and_commented_once() {
    let Some(action) = action() else { return };
    let gh = mock_github();
    // A pull-request-like branch: the benchmark three times slower than at the merge
    // base, an effect large enough that the gate fails even beside two CPU hogs.
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.email", "t@example.com"]);
    git(&repo, &["config", "user.name", "Tester"]);
    std::fs::write(repo.join("bench.sh"), "echo start; sleep 0.02\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "the benchmark"]);
    git(&repo, &["checkout", "-qb", "pr"]);
    std::fs::write(repo.join("bench.sh"), "echo start; sleep 0.06\n").unwrap();
    git(&repo, &["commit", "-qam", "slower"]);
    let runner = d.path().join("runner");
    std::fs::create_dir(&runner).unwrap();
    let event = d.path().join("event.json");
    std::fs::write(
        &event,
        r#"{"action": "synchronize", "pull_request": {"number": 7}}"#,
    )
    .unwrap();
    let env = [
        ("GITHUB_EVENT_PATH", event.display().to_string()),
        ("GITHUB_REPOSITORY", "o/r".to_string()),
        ("GITHUB_API_URL", gh.url.clone()),
    ];
    let measure = |token: &str| {
        let vars = inputs(&[
            ("ci", "--runs 8 --fail-if-slower 10 -- sh bench.sh".into()),
            ("comment", "true".into()),
            ("github-token", token.into()),
        ]);
        run_steps(&action, vars, &repo, &runner, &env)
    };
    // Measured, commented, then the gate fails the job.
    let (codes, vars) = measure("secret");
    assert_eq!(
        ran(&codes),
        [Some(0), None, None, Some(0), Some(0), None, None, Some(1)],
        "{codes:?}"
    );
    assert_eq!(vars["steps.ci.outputs.regression"], "true");
    let dir = runner.join("tardy-ci");
    assert_eq!(
        std::fs::read_to_string(dir.join("pr.txt")).unwrap().trim(),
        "7"
    );
    {
        let list = gh.comments.lock().unwrap();
        assert_eq!(list.len(), 1);
        assert!(
            list[0]
                .1
                .starts_with("<!-- tardy-ci -->\n### tardy: head is"),
            "{}",
            list[0].1
        );
    }
    let summary = std::fs::read_to_string(runner.join("summary.md")).unwrap();
    assert!(summary.contains("<!-- tardy-ci -->"), "{summary}");
    // A second push: the same comment is edited, not a new one added.
    let (codes, _) = measure("secret");
    assert_eq!(ran(&codes)[7], Some(1));
    assert_eq!(gh.comments.lock().unwrap().len(), 1);
    assert!(
        gh.log
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.starts_with("PATCH /repos/o/r/issues/comments/1000"))
    );
    // A fork's read-only token: the comment step fails and says why.
    let (codes, _) = measure("read-only");
    assert_eq!(ran(&codes)[4], Some(2), "{codes:?}");
    // The fork-safe half: a workflow_run job posts the artifact's comment.
    std::fs::write(
        dir.join("comment.md"),
        "<!-- tardy-ci -->\nfrom the artifact\n",
    )
    .unwrap();
    let vars = inputs(&[
        ("comment-file", dir.join("comment.md").display().to_string()),
        ("pr-number", "7".into()),
        ("github-token", "secret".into()),
    ]);
    let env_run = [
        ("GITHUB_REPOSITORY", "o/r".to_string()),
        ("GITHUB_API_URL", gh.url.clone()),
    ];
    let (codes, _) = run_steps(&action, vars, d.path(), &runner, &env_run);
    assert_eq!(
        ran(&codes),
        [Some(0), None, None, None, None, Some(0), None, None],
        "{codes:?}"
    );
    let list = gh.comments.lock().unwrap();
    assert_eq!(list.len(), 1);
    assert!(list[0].1.contains("from the artifact"));
}

#[test]
fn on_main_the_action_pushes_what_it_measured_to_the_team_server() {
    let Some(action) = action() else { return };
    let d = tempfile::tempdir().unwrap();
    let (write, _) = common::tokens(d.path());
    let server =
        common::Server::start(d.path(), &["--db", "sqlite:h.db", "--token-file", "tokens"]);
    let repo = d.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("bench.sh"), "echo start; sleep 0.01\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "the benchmark"]);
    let runner = d.path().join("runner");
    std::fs::create_dir(&runner).unwrap();
    let report = common::data("reports/jest-junit.xml");
    let vars = inputs(&[
        ("run", "--runs 3 -n bench 'sh bench.sh'".into()),
        ("push", server.url.clone()),
        ("push-files", report.display().to_string()),
        ("push-token", write.clone()),
    ]);
    let (codes, _) = run_steps(&action, vars, &repo, &runner, &[]);
    // Install, run, then the push; nothing else.
    assert_eq!(
        ran(&codes),
        [Some(0), Some(0), None, None, None, None, Some(0), None],
        "{codes:?}"
    );
    let series = common::get(&format!("{}/api/v1/series", server.url), &[]).json();
    let names: Vec<&str> = series
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(names.contains(&"bench"), "{series}");
    assert!(names.len() >= 2, "the test report went too: {series}");
    // A wrong token fails the step, and says so.
    let vars = inputs(&[
        ("run", "--runs 3 -n bench 'sh bench.sh'".into()),
        ("push", server.url.clone()),
        ("push-token", "not-a-token".into()),
    ]);
    let (codes, _) = run_steps(&action, vars, &repo, &runner, &[]);
    assert_ne!(ran(&codes)[6], Some(0), "{codes:?}");
}

#[test]
fn the_example_workflows_use_only_inputs_the_action_has() {
    let Some(action) = action() else { return };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/github");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let out = Command::new("python3")
            .args([
                "-c",
                "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
            ])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", path.display());
        let wf: Value = serde_json::from_slice(&out.stdout).unwrap();
        for job in wf["jobs"].as_object().unwrap().values() {
            for step in job["steps"].as_array().unwrap() {
                if !step["uses"].as_str().unwrap_or("").contains("/tardy@") {
                    continue;
                }
                seen += 1;
                for key in step["with"].as_object().unwrap().keys() {
                    assert!(
                        action["inputs"].get(key).is_some(),
                        "{}: the action has no input {key}",
                        path.display()
                    );
                }
            }
        }
    }
    assert!(seen >= 3, "{seen}");
}

/// Getting tardy: a binary given is used as it is; without one, the version
/// is read from the action's Cargo.toml, and a release that cannot be had
/// (no repository, no network, no release for this version) is no error,
/// only the note that the source will be built.
#[test]
fn the_action_gets_tardy_from_a_release_or_a_cached_build() {
    let Some(action) = action() else { return };
    let dir = tempfile::tempdir().unwrap();
    let runner = tempfile::tempdir().unwrap();
    let tardy = assert_cmd::cargo::cargo_bin("tardy");
    let (codes, vars) = run_steps(&action, inputs(&[]), dir.path(), runner.path(), &[]);
    let by = |n: &str| codes.iter().find(|(name, _)| name == n).map(|(_, c)| *c);
    assert_eq!(by("Which tardy"), Some(Some(0)));
    assert_eq!(
        by("Download the released tardy"),
        Some(None),
        "a binary was given"
    );
    assert_eq!(by("Cache the built tardy"), Some(None));
    assert_eq!(
        vars["steps.version.outputs.version"],
        env!("CARGO_PKG_VERSION")
    );
    assert!(vars["steps.version.outputs.target"].ends_with("-unknown-linux-gnu"));
    assert_eq!(
        vars["steps.install.outputs.tardy"],
        tardy.display().to_string()
    );
    // The download step alone, with no release to be had: exit 0, no binary.
    let step = action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "release")
        .unwrap();
    let out = Command::new("bash")
        .args(["-e", "-c", step["run"].as_str().unwrap()])
        .env("RUNNER_TEMP", runner.path())
        .env("GITHUB_OUTPUT", runner.path().join("out"))
        .env("REPO", "")
        .env("VERSION", env!("CARGO_PKG_VERSION"))
        .env("TARGET", "x86_64-unknown-linux-gnu")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("building it"));
    let written = std::fs::read_to_string(runner.path().join("out")).unwrap_or_default();
    assert!(!written.contains("tardy="), "{written}");
}
