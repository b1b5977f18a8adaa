//! `--metric instructions` on real programs: C programs that print, sleep,
//! spawn through a shell; told apart by 0.5% with five runs a side whatever
//! the load; compared from JSON; bisected among 64 commits in a dozen runs.
//!
//! Without a hardware PMU (this machine, most VMs) the counts come from
//! valgrind's cachegrind. The tests skip with a printed reason when neither
//! valgrind nor a C compiler is here, except under `TARDY_REQUIRE_VALGRIND=1`
//! (set by `.ci/run`, which installs both), where a skip is a failure.

mod common;

use std::path::{Path, PathBuf};

use common::{cmd, tardy};
use serde_json::Value;

/// A deterministic workload: N rounds of an FNV-style hash on each of its
/// threads, then an optional sleep; it prints its result, as real programs do.
const WORK_C: &str = r#"#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifndef N
#define N 1000000L
#endif
static long n;
static void *work(void *out) {
    unsigned long h = 1469598103934665603UL;
    for (long i = 0; i < n; i++) { h ^= (unsigned long)i; h *= 1099511628211UL; }
    *(unsigned long *)out = h;
    return 0;
}
/* work [N [SLEEP_MS [THREADS]]]: N rounds of a hash on each of THREADS threads. */
int main(int argc, char **argv) {
    n = argc > 1 ? atol(argv[1]) : N;
    long sleep_ms = argc > 2 ? atol(argv[2]) : 0;
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    pthread_t t[16];
    unsigned long h[16];
    if (threads < 1 || threads > 16) threads = 1;
    /* One thread works on its own: a thread's creation moves the count by a
       few instructions from run to run, whose scheduling varies. */
    if (threads == 1) work(&h[0]);
    else {
        for (int k = 0; k < threads; k++) pthread_create(&t[k], 0, work, &h[k]);
        for (int k = 0; k < threads; k++) pthread_join(t[k], 0);
    }
    if (sleep_ms) usleep(sleep_ms * 1000);
    printf("%lu\n", h[0]);
    return 0;
}
"#;

/// Whether counting can be tested here; prints why not (or fails in CI).
fn can_count(test: &str) -> bool {
    let valgrind = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let cc = std::process::Command::new("cc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if valgrind && cc {
        return true;
    }
    let why = format!(
        "SKIPPED {test}: {} (install valgrind and a C compiler)",
        if !valgrind {
            "no valgrind, and this machine's PMU is not assumed"
        } else {
            "no C compiler"
        }
    );
    assert!(
        std::env::var_os("TARDY_REQUIRE_VALGRIND").is_none(),
        "{why}, but TARDY_REQUIRE_VALGRIND is set"
    );
    eprintln!("{why}");
    false
}

fn compile(dir: &Path, name: &str, defines: &[&str]) -> PathBuf {
    let src = dir.join("work.c");
    std::fs::write(&src, WORK_C).unwrap();
    let out = dir.join(name);
    let st = std::process::Command::new("cc")
        .args(["-O1", "-pthread"])
        .args(defines)
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    out
}

fn run_json(dir: &Path, args: &[&str]) -> Value {
    let out = dir.join("r.json");
    let o = tardy(dir)
        .arg("run")
        .args(args)
        .arg("--export-json")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "tardy run {args:?}: {err}");
    // Off a terminal, what counting costs is said once in the log.
    let counted = args
        .iter()
        .any(|a| a.contains("instructions") || a.contains("estimated-cycles"));
    if counted && !args.contains(&"pmu") {
        assert_eq!(
            err.matches("counting under valgrind's cachegrind").count(),
            1,
            "{err}"
        );
    }
    serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap()
}

fn counts(r: &Value, b: usize, metric: &str) -> Vec<u64> {
    r["benchmarks"][b]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| !x["warmup"].as_bool().unwrap())
        .map(|x| x["counts"][metric].as_u64().unwrap())
        .collect()
}

/// The counts of benchmark `b`'s first measured run.
fn first_counts(r: &Value, b: usize) -> &Value {
    let runs = r["benchmarks"][b]["runs"].as_array().unwrap();
    &runs
        .iter()
        .find(|x| !x["warmup"].as_bool().unwrap())
        .unwrap()["counts"]
}

fn comparison<'a>(r: &'a Value, metric: &str) -> &'a Value {
    r["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} comparison in {}", r["comparisons"]))
}

#[test]
fn half_a_percent_more_instructions_is_told_apart_in_five_runs() {
    if !can_count("half_a_percent_more_instructions_is_told_apart_in_five_runs") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let a = compile(d.path(), "a", &["-DN=1000000L"]);
    let b = compile(d.path(), "b", &["-DN=1005000L"]);
    // Two CPU hogs of our own beside it: counts must not care.
    let hogs = common::Hogs::start(2);
    let r = run_json(
        d.path(),
        &[
            "--metric",
            "instructions",
            "--runs",
            "5",
            &a.display().to_string(),
            &b.display().to_string(),
        ],
    );
    drop(hogs);
    assert_eq!(r["options"]["metrics"][0], "instructions");
    assert_eq!(r["options"]["counter"]["backend"], "cachegrind");
    for k in 0..2 {
        let v = counts(&r, k, "instructions");
        assert_eq!(v.len(), 5);
        let (lo, hi) = (*v.iter().min().unwrap(), *v.iter().max().unwrap());
        assert!(
            (hi - lo) as f64 / (lo as f64) < 0.0005,
            "counts spread over 0.05%: {v:?}"
        );
        assert_eq!(r["benchmarks"][k]["counts"][0]["metric"], "instructions");
        // Every run also has its wall time, measured apart from the counted run.
        assert!(r["benchmarks"][k]["summary"]["median"].as_f64().unwrap() > 0.0);
    }
    // What counting cost was said, and recorded per run.
    assert!(
        r["benchmarks"][0]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| !x["warmup"].as_bool().unwrap())
            .all(|x| x["counts"]["counted_wall_ns"].as_u64() > Some(0)),
        "{}",
        r["benchmarks"][0]["runs"]
    );
    let c = comparison(&r, "instructions");
    assert_eq!(c["estimate"]["verdict"], "slower", "{c}");
    let ratio = c["estimate"]["ratio"].as_f64().unwrap();
    assert!((1.003..1.007).contains(&ratio), "ratio {ratio}");
    // The file reads back, its exact comparison (a null p-value) included.
    for args in [
        &["compare", "r.json"][..],
        &["report", "r.json", "-o", "r.html"][..],
    ] {
        let o = tardy(d.path()).args(args).output().unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let html = std::fs::read_to_string(d.path().join("r.html")).unwrap();
    assert!(html.contains("r.json · instructions"), "{html}");
}

#[test]
fn a_shells_children_are_counted_and_sleeping_adds_no_instructions() {
    if !can_count("a_shells_children_are_counted_and_sleeping_adds_no_instructions") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let w = compile(d.path(), "w", &[]).display().to_string();
    let numbers: String = (0..20_000)
        .map(|i| format!("{}\n", (i * 7919) % 20_000))
        .collect();
    std::fs::write(d.path().join("numbers.txt"), numbers).unwrap();
    let r = run_json(
        d.path(),
        &[
            "--metric",
            "instructions",
            "--runs",
            "2",
            "--input",
            "numbers.txt",
            &format!("{w} 1000000"),
            // A shell running it twice, piped through wc: three processes.
            &format!("{w} 1000000 | wc -c; {w} 1000000"),
            // The same work, then 100 ms of sleep.
            &format!("{w} 1000000 100"),
            // The same work on each of four threads.
            &format!("{w} 1000000 0 4"),
            // A pipeline reading the input file on stdin.
            "sort -n | wc -l",
        ],
    );
    let one = counts(&r, 0, "instructions")[0] as f64;
    let twice = counts(&r, 1, "instructions")[0] as f64;
    let slept = counts(&r, 2, "instructions")[0] as f64;
    assert!(
        (1.9..2.4).contains(&(twice / one)),
        "two runs under a shell counted {twice} against {one}"
    );
    let processes = first_counts(&r, 1)["processes"].as_u64().unwrap();
    assert!(processes >= 3, "{processes} processes counted");
    assert!(
        (slept / one - 1.0).abs() < 0.001,
        "sleeping changed the count: {slept} against {one}"
    );
    // Four threads: four times the loop (the start-up once).
    let threads = counts(&r, 3, "instructions")[0] as f64;
    assert!(
        (3.5..4.2).contains(&(threads / one)),
        "four threads counted {threads} against {one}"
    );
    // Reading 20,000 lines from stdin and sorting them: counted, and (whatever
    // sort's threads did) within a tenth of a percent from run to run.
    let sorted = counts(&r, 4, "instructions");
    let (lo, hi) = (sorted[0].min(sorted[1]), sorted[0].max(sorted[1]));
    assert!(lo > 1_000_000 && (hi - lo) * 1000 < lo, "{sorted:?}");
    // ... while the wall time saw the sleep.
    let wall = |b: usize| r["benchmarks"][b]["summary"]["median"].as_f64().unwrap();
    assert!(wall(2) > wall(0) + 0.08);
}

#[test]
fn estimated_cycles_weigh_the_simulated_cache() {
    if !can_count("estimated_cycles_weigh_the_simulated_cache") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let w = compile(d.path(), "w", &[]).display().to_string();
    let r = run_json(
        d.path(),
        &[
            "--metric",
            "estimated-cycles,instructions",
            "--runs",
            "2",
            &format!("{w} 200000"),
        ],
    );
    let run = first_counts(&r, 0);
    let (est, ir) = (
        run["estimated_cycles"].as_u64().unwrap(),
        run["instructions"].as_u64().unwrap(),
    );
    // Every instruction is an access (at least one cycle), and misses cost more.
    assert!(est > ir, "{est} estimated cycles for {ir} instructions");
    for e in [
        "Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw",
    ] {
        assert!(run["events"][e].is_u64(), "no {e} in {run}");
    }
    assert!(
        r["options"]["counter"]["cache"]
            .as_str()
            .unwrap()
            .contains("LL 8388608,16,64")
    );
}

#[test]
fn compare_reads_counts_from_results_files_and_calls_them_exact() {
    if !can_count("compare_reads_counts_from_results_files_and_calls_them_exact") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let a = compile(d.path(), "a", &["-DN=1000000L"]);
    let b = compile(d.path(), "b", &["-DN=1005000L"]);
    for (name, prog) in [("old.json", &a), ("new.json", &b)] {
        let o = tardy(d.path())
            .args(["run", "-q", "--metric", "instructions", "--runs", "3"])
            .args(["--name", "work", "--export-json", name])
            .arg(prog)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = tardy(d.path())
        .args(["compare", "--format", "json", "old.json", "new.json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = j["rows"].as_array().unwrap();
    let row = rows
        .iter()
        .find(|r| r["unit"] == "instructions")
        .unwrap_or_else(|| panic!("no instructions row in {j}"));
    assert_eq!(row["verdict"], "slower");
    assert!(row["p_value"].is_null(), "{row}");
    // Wall time is still there, beside it.
    assert!(rows.iter().any(|r| r["unit"] == "s"));
    let text = tardy(d.path())
        .args(["compare", "old.json", "new.json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("every run identical"), "{text}");
}

#[test]
fn bisect_finds_a_half_percent_regression_among_64_commits_in_a_dozen_runs() {
    if !can_count("bisect_finds_a_half_percent_regression_among_64_commits_in_a_dozen_runs") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let git = |args: &[&str]| common::git(&repo, args);
    git(&["init", "-q"]);
    let src = |n: &str, i: usize| {
        format!("#define N {n}\n{WORK_C}\n/* change {i} */\n").replace(
            "long n = argc > 1 ? atol(argv[1]) : N;",
            "long n = N; (void)argv;",
        )
    };
    std::fs::write(repo.join("work.c"), src("1000000L", 0)).unwrap();
    git(&["add", "work.c"]);
    git(&["commit", "-qm", "base"]);
    for i in 1..=64 {
        let n = if i >= 37 { "1005000L" } else { "1000000L" };
        std::fs::write(repo.join("work.c"), src(n, i)).unwrap();
        git(&["commit", "-qam", &format!("commit {i}")]);
    }
    let o = tardy(&repo)
        .args(["bisect", "--good", "HEAD~64", "--bad", "HEAD"])
        .args([
            "--build",
            "cc -O1 -o work work.c",
            "--metric",
            "instructions",
        ])
        .args(["--format", "json", "--", "./work"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["verdict"], "confirmed", "{j}");
    assert_eq!(j["culprit"]["subject"], "commit 37", "{j}");
    let runs = j["total_runs"].as_u64().unwrap();
    assert!(runs <= 20, "{runs} runs");
    // One run a step: a plain binary search over 63 commits takes six.
    let steps = j["steps"].as_array().unwrap();
    assert!(steps.len() <= 7, "{} steps", steps.len());
    assert!(steps.iter().all(|s| s["runs"].as_u64() <= Some(2)), "{j}");
    // The saved state (exact ratios, no p-values) reads back.
    let log = tardy(&repo).args(["bisect", "log"]).output().unwrap();
    assert!(
        log.status.success(),
        "{}",
        String::from_utf8_lossy(&log.stderr)
    );
    assert!(String::from_utf8_lossy(&log.stdout).contains("commit 37"));
}

#[test]
fn counting_that_cannot_happen_says_why_and_what_to_install() {
    // No valgrind at the named place: the package to install, before anything runs.
    let err = common::refuses(
        cmd()
            .env("TARDY_VALGRIND", "/nonexistent/valgrind")
            .args(["run", "--metric", "instructions", "--counter", "cachegrind"])
            .arg("true"),
        "install the 'valgrind' package",
    );
    assert!(!err.contains("panicked"));
    common::refuses(
        cmd().args(["run", "--metric", "bogus", "true"]),
        "unknown metric 'bogus'",
    );
    // Estimated cycles come from the simulation, never from the PMU.
    common::refuses(
        cmd().args([
            "run",
            "--metric",
            "estimated-cycles",
            "--counter",
            "pmu",
            "true",
        ]),
        "estimated-cycles come from cachegrind",
    );
}

/// The PMU path on any machine: the trampoline's inherited counters, enabled
/// around the fork and read after `wait4`, with a software event standing in
/// for the hardware one (`TARDY_PMU_EVENT=task-clock`): a shell running the
/// work twice counts about twice its CPU time, so its children were counted.
#[test]
fn the_counters_path_follows_children_with_a_software_event() {
    if !can_count("the_counters_path_follows_children_with_a_software_event") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let w = compile(d.path(), "w", &[]).display().to_string();
    let out = d.path().join("r.json");
    let o = tardy(d.path())
        .env("TARDY_PMU_EVENT", "task-clock")
        .args([
            "run",
            "--counter",
            "pmu",
            "--metric",
            "instructions",
            "--runs",
            "5",
        ])
        .arg(format!("{w} 20000000"))
        .arg(format!("{w} 20000000; {w} 20000000 | wc -c"))
        .arg("--export-json")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(r["options"]["counter"]["backend"], "pmu");
    // The substitute is named: such a file never passes for instructions.
    assert!(
        r["options"]["counter"]["events"][0]
            .as_str()
            .unwrap()
            .starts_with("task-clock:u (the software event"),
        "{}",
        r["options"]["counter"]
    );
    let median = |b: usize| {
        let mut v = counts(&r, b, "instructions");
        v.sort_unstable();
        v[v.len() / 2] as f64
    };
    let ratio = median(1) / median(0);
    assert!(
        (1.5..3.0).contains(&ratio),
        "the shell's two children counted {ratio}x one"
    );
}

/// The PMU path: real counters where the machine has them (most bare-metal
/// Linux), a printed skip where it has none (this VM).
#[test]
fn the_pmu_counts_a_process_tree_where_there_is_one() {
    let probe = cmd()
        .args(["doctor", "--only", "counters", "--json"])
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&probe.stdout).unwrap_or(Value::Null);
    let pmu = j["probes"][0]["facts"]["pmu"].as_bool();
    assert!(pmu.is_some(), "doctor's counters probe says nothing: {j}");
    if pmu != Some(true) {
        eprintln!(
            "SKIPPED the hardware part of the_pmu_counts_a_process_tree_where_there_is_one: no hardware PMU here ({}); the same path ran with a software event",
            j["probes"][0]["facts"]["pmu_why"]
        );
        // The refusal is clear, not a crash.
        common::refuses(
            cmd().args(["run", "--metric", "cycles", "true"]),
            "needs a hardware PMU",
        );
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let r = run_json(
        d.path(),
        &[
            "--metric",
            "instructions,cycles",
            "--counter",
            "pmu",
            "--runs",
            "5",
            "sh -c 'seq 1 20000 | wc -l'",
            "sh -c 'seq 1 40000 | wc -l'",
        ],
    );
    assert_eq!(r["options"]["counter"]["backend"], "pmu");
    let a = counts(&r, 0, "instructions");
    let b = counts(&r, 1, "instructions");
    assert!(a.iter().all(|&v| v > 100_000), "{a:?}");
    let (ma, mb) = (a[2] as f64, b[2] as f64);
    assert!(
        mb > ma * 1.2,
        "{mb} against {ma}: seq's children not counted"
    );
    assert!(counts(&r, 0, "cycles").iter().all(|&v| v > 0));
}

#[test]
fn history_sees_a_fifth_of_a_percent_step_in_counts_two_points_after_it() {
    let d = tempfile::tempdir().unwrap();
    let mut csv = String::from("time,work\n");
    for i in 0..32 {
        let v = if i < 30 { 5_128_074 } else { 5_138_330 };
        csv.push_str(&format!("{},{v}\n", 1_767_225_600 + i * 3600));
    }
    std::fs::write(d.path().join("counts.csv"), csv).unwrap();
    let o = tardy(d.path())
        .args(["history", "analyze", "counts.csv"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("1 change points"), "{text}");
    assert!(
        text.contains("(point 30)") && text.contains("+0.2%"),
        "{text}"
    );
}

#[test]
fn ci_gates_a_pull_request_on_instructions_against_its_merge_base() {
    if !can_count("ci_gates_a_pull_request_on_instructions_against_its_merge_base") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let git = |args: &[&str]| common::git(&repo, args);
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("work.c"), WORK_C).unwrap();
    git(&["add", "work.c"]);
    git(&["commit", "-qm", "base"]);
    git(&["checkout", "-q", "-b", "feature"]);
    let slower = WORK_C.replace("#define N 1000000L", "#define N 1005000L");
    std::fs::write(repo.join("work.c"), slower).unwrap();
    git(&["commit", "-qam", "half a percent more work"]);
    let o = tardy(&repo)
        .args(["ci", "--base", "main", "--build", "cc -O1 -o work work.c"])
        .args(["--metric", "instructions", "--fail-if-slower", "0.2%"])
        .args(["--json", "--markdown", "comment.md", "--", "./work"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "the gate must fail: {err}");
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["metric"], "instructions", "{j}");
    assert_eq!(j["exact"], true, "{j}");
    assert_eq!(j["regression"], true, "{j}");
    let md = std::fs::read_to_string(repo.join("comment.md")).unwrap();
    assert!(
        md.contains("more instructions than base, every run identical"),
        "{md}"
    );
}

#[test]
fn a_pushed_run_keeps_its_counts_beside_its_wall_time_on_the_server() {
    if !can_count("a_pushed_run_keeps_its_counts_beside_its_wall_time_on_the_server") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let w = compile(d.path(), "w", &[]);
    let o = tardy(d.path())
        .args(["run", "-q", "--metric", "instructions", "--runs", "3"])
        .args(["--name", "work", "--export-json", "r.json"])
        .arg(&w)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (write, _) = common::tokens(d.path());
    let server =
        common::Server::start(d.path(), &["--db", "sqlite:h.db", "--token-file", "tokens"]);
    let url = server.url.clone();
    let out = tardy(d.path())
        .env("TARDY_TOKEN", &write)
        .args(["push", &url, "r.json", "--commit", "c1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("2 series"), "{err}");
    let series = common::get(&format!("{url}/api/v1/series"), &[]).json();
    let counted = series
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "work [instructions]")
        .unwrap_or_else(|| panic!("no count series in {series}"));
    assert_eq!(counted["unit"], "instructions", "{counted}");
    // The benchmark's page draws its instructions beside its wall time.
    let page = common::get(&format!("{url}/series?name=work"), &[]);
    assert_eq!(page.status, 200);
    assert!(page.text.contains("Measured alongside"), "{}", page.text);
    assert!(page.text.contains("work [instructions]"));
    assert_eq!(page.text.matches("<svg class=\"chart\"").count(), 2);
}

#[test]
fn the_server_alerts_a_fifth_of_a_percent_in_counts_at_its_second_point() {
    let d = tempfile::tempdir().unwrap();
    let (write, _) = common::tokens(d.path());
    let server =
        common::Server::start(d.path(), &["--db", "sqlite:h.db", "--token-file", "tokens"]);
    let auth = format!("Bearer {write}");
    let mut first_alert = None;
    for i in 1..=34 {
        let v = if i <= 30 { 5_128_074 } else { 5_138_330 };
        let body = format!(
            r#"{{"series":[{{"name":"work [instructions]","unit":"instructions","points":[{{"value":{v},"commit":"c{i}","time":{}}}]}}]}}"#,
            1_767_225_600 + i * 3600
        );
        let a = common::post(
            &format!("{}/api/v1/points", server.url),
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
            ],
            body.as_bytes(),
        );
        assert_eq!(a.status, 201, "{}", a.text);
        let alerts = a.json()["alerts"].as_array().cloned().unwrap_or_default();
        if let Some(x) = alerts.first() {
            assert!(first_alert.is_none(), "a second alert at upload {i}: {x}");
            assert_eq!(
                (x["from_commit"].as_str(), x["to_commit"].as_str()),
                (Some("c30"), Some("c31")),
                "{x}"
            );
            first_alert = Some(i);
        }
    }
    // The step at upload 31 is alerted at 32: two points at the new level.
    assert_eq!(first_alert, Some(32));
}
