//! Nothing tardy sets on the machine outlives it or disturbs a neighbour
//! (WebPageTest's lesson: a measuring tool that changes what it measures is
//! wrong). `tardy explain`'s kernel recorder defines its uprobe (the dynamic
//! loader's `_dl_debug_state`) under a group of its own, opens it on the
//! command's tasks alone, and removes it at the end; a probe left by a
//! tardy killed with SIGKILL is removed by the next one; a valgrind started
//! beside an explain runs to completion (a probe armed in every process
//! made each die of SIGTRAP); `kernel.task_delayacct` is never touched.
//! The tests skip, saying why, where the kernel recorder cannot run.

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

fn tardy_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tardy"))
}

fn uprobe_events() -> Option<String> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .find_map(|r| std::fs::read_to_string(format!("{r}/uprobe_events")).ok())
}

fn delayacct() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/task_delayacct").ok()
}

/// Whether `tardy explain` uses the kernel recorder here (printing why not).
fn kernel_recorder(test: &str) -> bool {
    let t = common::explain_json(&["--runs", "1", "--", "true"]);
    if t["overhead"]["recorder"] == "kernel-events" && uprobe_events().is_some() {
        return true;
    }
    eprintln!(
        "SKIPPED {test}: the kernel-event recorder is not used here ({})",
        t["overhead"]["fallback"]
    );
    false
}

/// `tardy explain --runs 1 -- sleep SECS`, started.
fn explain_sleep(secs: &str) -> Child {
    Command::new(tardy_bin())
        .args(["explain", "--runs", "1", "--", "sleep", secs])
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The uprobe lines of tardy process `pid`.
fn probes_of(pid: u32) -> Vec<String> {
    let group = format!("tardy_{pid}/");
    uprobe_events()
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(&group))
        .map(String::from)
        .collect()
}

/// Wait (up to 10 s) until tardy `pid` has its probe defined: the session's
/// events are open then.
fn wait_for_probe(pid: u32) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if !probes_of(pid).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn explain_leaves_no_probe_and_no_switch_behind() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !kernel_recorder("explain_leaves_no_probe_and_no_switch_behind") {
        return;
    }
    let before = delayacct();
    let mut child = explain_sleep("0.5");
    let pid = child.id();
    assert!(wait_for_probe(pid), "the session's probe is tardy_{pid}");
    assert_eq!(delayacct(), before, "task_delayacct changed during explain");
    assert!(child.wait().unwrap().success());
    assert_eq!(probes_of(pid), Vec::<String>::new(), "left behind");
    let legacy: Vec<String> = uprobe_events()
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(":tardy/"))
        .map(String::from)
        .collect();
    assert!(
        legacy.is_empty(),
        "an older tardy's probe stayed: {legacy:?}"
    );
    assert_eq!(delayacct(), before, "task_delayacct changed by explain");
}

#[test]
fn a_killed_explain_is_cleaned_up_by_the_next() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !kernel_recorder("a_killed_explain_is_cleaned_up_by_the_next") {
        return;
    }
    let mut child = explain_sleep("30");
    let pid = child.id();
    assert!(wait_for_probe(pid));
    child.kill().unwrap();
    child.wait().unwrap();
    // The sleep it started was in a process group of its own: end it too.
    let _ = Command::new("pkill")
        .args(["-x", "-f", "sleep 30"])
        .status();
    // SIGKILL leaves the definition (the kernel closes the events)...
    assert!(!probes_of(pid).is_empty(), "SIGKILL cannot clean up");
    // ...which the next tardy removes.
    common::explain_json(&["--runs", "1", "--", "true"]);
    assert_eq!(probes_of(pid), Vec::<String>::new());
    // Its cgroup too.
    let left = Command::new("find")
        .args(["/sys/fs/cgroup", "-maxdepth", "5", "-name"])
        .arg(format!("tardy-{pid}"))
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    assert_eq!(left.trim(), "", "the killed tardy's cgroup stayed");
}

#[test]
fn valgrind_runs_to_completion_beside_an_explain() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let has_valgrind = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_valgrind {
        eprintln!("SKIPPED valgrind_runs_to_completion_beside_an_explain: no valgrind");
        return;
    }
    if !kernel_recorder("valgrind_runs_to_completion_beside_an_explain") {
        return;
    }
    let mut child = explain_sleep("4");
    assert!(wait_for_probe(child.id()));
    // A dynamically linked program: it runs the loader the probe is on.
    for _ in 0..2 {
        let out = Command::new("valgrind")
            .args(["--tool=none", "/bin/ls", "/"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "valgrind died beside an explain: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(child.wait().unwrap().success());
}
