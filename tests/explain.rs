//! `tardy explain` on real processes: each story reproduced on this Linux
//! machine (a coarse timer, process creation growing with the binary, slow
//! fsync, longer spin-waits, a CPU-hungry sibling, more work), the top cause
//! checked, and the categories checked to sum to the wall time. Workloads are
//! examples/workload.rs. Runs are serialised: they time things.

mod common;

use std::path::PathBuf;
use std::sync::Mutex;

use common::explain_json;
use serde_json::Value;

static SERIAL: Mutex<()> = Mutex::new(());

fn workload() -> PathBuf {
    // target/debug/deps/explain-HASH -> target/debug/examples/workload
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let w = dir.join("examples/workload");
    assert!(
        w.is_file(),
        "{} not built (cargo test builds examples)",
        w.display()
    );
    w
}

fn tardy_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tardy"))
}

/// False (with a printed reason) when this machine cannot trace.
fn traced(t: &Value, test: &str) -> bool {
    if t["coverage"] == "full" {
        return true;
    }
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: tracing unavailable here ({})",
        t["coverage_note"]
    );
    false
}

/// Every run's categories sum to its wall time within 5%.
fn sums_to_wall(t: &Value) {
    for run in t["runs"].as_array().unwrap() {
        let wall = run["wall_s"].as_f64().unwrap();
        let sum: f64 = run["categories"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_f64().unwrap())
            .sum();
        assert!(
            (sum - wall).abs() <= 0.05 * wall,
            "categories sum to {sum}, wall {wall}"
        );
    }
    let sum: f64 = t["categories"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_f64().unwrap())
        .sum();
    let wall = t["wall_s"].as_f64().unwrap();
    assert!((sum - wall).abs() <= 0.05 * wall, "{sum} vs {wall}");
}

fn top(c: &Value) -> (&str, f64) {
    let first = &c["causes"][0];
    (
        first["kind"].as_str().unwrap_or(""),
        first["share"].as_f64().unwrap_or(0.0),
    )
}

fn check_pair(c: &Value, test: &str) -> bool {
    if !traced(&c["a"], test) || !traced(&c["b"], test) {
        return false;
    }
    sums_to_wall(&c["a"]);
    sums_to_wall(&c["b"]);
    one_base_for_every_share(c);
    true
}

/// Every row's share is of one base (the wall difference, or the sum of the
/// changes): the row the run-queue delay is counted with holds both their
/// differences, and the run-queue row none.
fn one_base_for_every_share(c: &Value) {
    let rows = c["table"].as_array().unwrap();
    let row = |cat: &str| rows.iter().find(|r| r["category"] == cat);
    let delta = |r: &Value| r["delta_s"].as_f64().unwrap();
    let share = |r: &Value| r["share"].as_f64().unwrap();
    let host = c["run_queue_counted_with"].as_str();
    let rq = row("run-queue").map_or(0.0, delta);
    let counted = |r: &Value| {
        let cat = r["category"].as_str().unwrap();
        match host {
            Some(_) if cat == "run-queue" => 0.0,
            Some(h) if cat == h => delta(r) + rq,
            _ => delta(r),
        }
    };
    let bases: Vec<f64> = rows
        .iter()
        .filter(|r| counted(r).abs() > 1e-4 && share(r) != 0.0)
        .map(|r| counted(r) / share(r))
        .collect();
    for b in &bases {
        assert!(
            (b - bases[0]).abs() <= 1e-6 * bases[0].abs().max(1e-9),
            "shares of different bases {bases:?}: {rows:#?}"
        );
    }
    if host.is_some() {
        assert_eq!(row("run-queue").map_or(0.0, share), 0.0);
    }
}

#[test]
fn nunit_sleep_under_a_coarse_timer_is_timed_sleeps() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = workload();
    let prefix = format!("{} exec --timer-slack 15600000 --", tardy_bin().display());
    let c = explain_json(&[
        "--prefix-b",
        &prefix,
        "--",
        w.to_str().unwrap(),
        "sleeps",
        "20",
        "1",
    ]);
    if !check_pair(&c, "nunit_sleep_under_a_coarse_timer_is_timed_sleeps") {
        return;
    }
    let (kind, share) = top(&c);
    assert_eq!(kind, "timed-sleep", "{}", common::brief(&c));
    // Most of the difference, not all: on a busy machine other waits add some.
    assert!(share >= 0.6, "share {share}");
    assert_eq!(
        c["causes"][0]["driver"],
        "slower-calls",
        "{}",
        common::brief(&c)
    );
    // The slack B asked for, as the kernel recorded it on each sleep's
    // timer (the overshoot itself depends on other timers and the load).
    let mut slack = 0.0;
    let mut n = 0.0;
    for run in c["b"]["runs"].as_array().unwrap() {
        let s = &run["syscalls"]["sleep"];
        slack += s["slack_s"].as_f64().unwrap_or(0.0);
        n += s["count"].as_f64().unwrap();
    }
    if c["b"]["overhead"]["recorder"] == "kernel-events" {
        let per = slack / n;
        assert!((per - 0.0156).abs() <= 0.01 * 0.0156, "slack {per}");
    }
    let d = c["diagnosis"].as_str().unwrap();
    assert!(d.contains("timer"), "{d}");
}

/// Vivaldi's CreateProcess on Linux: the cost of starting a process that
/// grows with the binary is the dynamic loader's relocations. Two C programs
/// that do nothing, one with 300,000 relocations, started 40 times each.
#[test]
fn a_large_binary_makes_process_creation_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let n = 300_000;
    let big_c = dir.path().join("big.c");
    std::fs::write(
        &big_c,
        format!(
            "static void f(void){{}}\nvoid (*const t[{n}])(void) = {{{}}};\nint main(void){{ return t[0] == 0; }}\n",
            "f,".repeat(n)
        ),
    )
    .unwrap();
    let small_c = dir.path().join("small.c");
    std::fs::write(&small_c, "int main(void){ return 0; }\n").unwrap();
    let (big, small) = (dir.path().join("big"), dir.path().join("small"));
    for (src, out) in [(&big_c, &big), (&small_c, &small)] {
        match std::process::Command::new("cc")
            .arg("-o")
            .arg(out)
            .arg(src)
            .status()
        {
            Ok(s) if s.success() => {}
            other => {
                eprintln!(
                    "SKIPPED a_large_binary_makes_process_creation_the_cause: no C compiler ({other:?})"
                );
                return;
            }
        }
    }
    // Compiled (seconds, for the large one) before taking the lock: another
    // test's runs go on meanwhile.
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = workload();
    // Eight runs a side: under two CPU hogs a process start's time varies
    // run to run, and five could leave the two sides overlapping.
    let c = explain_json(&[
        "--runs",
        "8",
        &format!("{} spawn 40 {}", w.display(), small.display()),
        &format!("{} spawn 40 {}", w.display(), big.display()),
    ]);
    if !check_pair(&c, "a_large_binary_makes_process_creation_the_cause") {
        return;
    }
    // Process creation holds most of the difference, slower calls its
    // driver. Under two CPU hogs its runs vary enough that a small, surely
    // significant cause (page faults) can rank above it: the share decides.
    let biggest = biggest_cause(&c);
    assert_eq!(
        (
            biggest["kind"].as_str().unwrap_or(""),
            biggest["driver"].as_str().unwrap_or("")
        ),
        ("process-creation", "slower-calls"),
        "{}",
        common::brief(&c)
    );
    let files = c["b"]["runs"][0]["exec_files"].as_array().unwrap();
    let listed = files
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with("/big"))
        .expect("the large program is listed");
    assert!(listed["size_bytes"].as_u64().unwrap() > 4 << 20, "{listed}");
    assert!(listed["count"].as_u64().unwrap() >= 40);
    let ev = biggest["evidence"].as_str().unwrap();
    assert!(ev.contains("MB") && ev.contains("binary's size"), "{ev}");
}

#[test]
fn fsync_on_disk_vs_tmpfs_is_fsync() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let shm = std::path::Path::new("/dev/shm");
    let disk = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let fs = |p: &std::path::Path| tardy::probe::fingerprint::filesystem_type(p);
    if !shm.is_dir()
        || fs(shm).as_deref() != Some("tmpfs")
        || fs(disk.path()).as_deref() == Some("tmpfs")
    {
        eprintln!(
            "SKIPPED fsync_on_disk_vs_tmpfs_is_fsync: needs /dev/shm on tmpfs and the source tree on a disk"
        );
        return;
    }
    let w = workload();
    // A calls fdatasync as Go programs do, through the system call and not
    // libc's wrapper: on tmpfs it never waits, and it is counted all the same.
    let c = explain_json(&[
        "--runs",
        "5",
        &format!("{} fsync-raw 300 /dev/shm", w.display()),
        &format!("{} fsync 300 {}", w.display(), disk.path().display()),
    ]);
    if !check_pair(&c, "fsync_on_disk_vs_tmpfs_is_fsync") {
        return;
    }
    assert_eq!(top(&c).0, "fsync", "{}", common::brief(&c));
    for run in c["a"]["runs"].as_array().unwrap() {
        let n = run["syscalls"]["fsync"]["count"].as_f64().unwrap_or(0.0);
        assert!((300.0..=310.0).contains(&n), "{n} fsyncs seen: {run}");
    }
}

#[test]
fn longer_spin_waits_are_spinning_not_lock_waits() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = workload();
    let c = explain_json(&[
        "--runs",
        "5",
        &format!("{} lock 10000 200", w.display()),
        &format!("{} lock 10000 2800", w.display()),
    ]);
    if !check_pair(&c, "longer_spin_waits_are_spinning_not_lock_waits") {
        return;
    }
    // Four threads on one lock spin 14x longer: on this workload the
    // difference is small (the hand-off test above is the story's), and
    // beside two CPU hogs any category can lead a difference within the
    // noise. What holds: a lock wait never leads, since the waits did not
    // grow; and a proven slowdown is the CPU it is (spinning, user or
    // system CPU, or the wait for a core the longer spins bring).
    let first = top(&c).0;
    assert_ne!(first, "lock-wait", "{}", common::brief(&c));
    if c["significant"] == true {
        assert!(
            matches!(first, "spinning" | "cpu-user" | "cpu-system" | "run-queue"),
            "{first}: {}",
            common::brief(&c)
        );
    }
    let waits = |side: &str| -> f64 {
        c[side]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["syscalls"]["futex-wait"]["count"].as_f64().unwrap_or(0.0))
            .sum()
    };
    // The workload's own property: the longer spins bring no more lock waits
    // of the same order (within 1.2x on a quiet machine; beside two CPU
    // hogs, holders preempted mid-section make waiters park more often, so
    // only an order of magnitude is held here; what tardy says is the check
    // above: never a lock wait).
    let (a, b) = (waits("a"), waits("b"));
    assert!(b <= a * 10.0 + 250.0, "futex waits a run: A {a}, B {b}");
}

/// Skylake-SP's story as it happened: two threads hand a baton back and
/// forth; the waiter checks for it every 40 PAUSEs in A and every 10,000 in
/// B (each look costs far more PAUSE time, as with a PAUSE 14x slower),
/// parking after 20,000. B is slower and burns more CPU, and the profile
/// finds that CPU in a loop whose machine code holds PAUSE: spinning, on a
/// quiet machine and beside two CPU hogs alike, and never a lock wait (the
/// main thread's joins are not lock waits).
///
/// Beside two CPU hogs A's waiters spin too, whenever the holder loses its
/// core mid-section, up to the whole budget: with checks every 2,000 PAUSEs
/// B's extra spin (a median 0.46 s against A's 0.40 s in a CI run) was
/// within that and tardy rightly said "user CPU". Every 10,000 B spins
/// 1.0-1.4 s a run against A's 0.2-0.44 s there (six loaded sets here).
#[test]
fn the_spin_hand_off_is_spinning() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = workload();
    let c = explain_json(&[
        "--runs",
        "10",
        &format!("{} handoff 6000 40", w.display()),
        &format!("{} handoff 6000 10000", w.display()),
    ]);
    if !check_pair(&c, "the_spin_hand_off_is_spinning") {
        return;
    }
    if c["b"]["profile"]["spin_s"].is_null() {
        eprintln!(
            "SKIPPED the_spin_hand_off_is_spinning: no CPU profile here ({})",
            c["b"]["profile_note"]
        );
        return;
    }
    // Beside two CPU hogs on two cores the waiters mostly spin while the
    // holder waits for a core, whatever their PAUSEs a check: once in
    // thirty sets (CI, 10 runs of each) B's middle run spun less than A's
    // (1.34 s against 1.51 s) and was no slower. The workload's effect did
    // not happen, so spinning would be the wrong answer (tardy said "user
    // CPU +33 ms", wall within noise): said, not asserted.
    let spin = |side: &str| {
        let mut v: Vec<f64> = c[side]["profile"]["spin_s"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|x| x.as_f64())
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    if spin("b") <= spin("a") {
        eprintln!(
            "NOT SHOWN the_spin_hand_off_is_spinning: this machine's load erased the workload's effect (spin median A {:.3} s, B {:.3} s): {}",
            spin("a"),
            spin("b"),
            common::brief(&c)
        );
        return;
    }
    assert_eq!(top(&c).0, "spinning", "{}", common::brief(&c));
    let ev = c["causes"][0]["evidence"].as_str().unwrap();
    assert!(ev.contains("spin-wait loops"), "{ev}");
    // Beside two CPU hogs a preempted holder makes B's waiters outlast
    // their spin and park more: a lock wait may follow, never lead.
}

#[test]
fn a_cpu_hungry_sibling_is_cpu_contention_and_is_named() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = workload();
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    // Five runs a side: on a loaded machine three may not separate.
    let c = explain_json(&[
        "--runs",
        "5",
        &format!("{} compute 300", w.display()),
        &format!(
            "sh -c '{} hog 20 {cpus} & {} compute 300; kill $!'",
            w.display(),
            w.display()
        ),
    ]);
    if !check_pair(&c, "a_cpu_hungry_sibling_is_cpu_contention_and_is_named") {
        return;
    }
    // The wait for a CPU holds most of the difference and names the hog.
    // Beside two more CPU hogs (the test under load) A waits for a core
    // too, so its verdict may be "noise" while a small exact count (the
    // extra processes) is "certain" and ranks first: the share decides here.
    let biggest = biggest_cause(&c);
    assert_eq!(biggest["kind"], "run-queue", "{}", common::brief(&c));
    let ev = biggest["evidence"].as_str().unwrap();
    assert!(ev.contains("hog"), "{ev}");
}

#[test]
fn twice_the_work_is_user_cpu() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = workload();
    let c = explain_json(&[
        &format!("{} compute 150", w.display()),
        &format!("{} compute 300", w.display()),
    ]);
    if !check_pair(&c, "twice_the_work_is_user_cpu") {
        return;
    }
    assert_eq!(top(&c).0, "cpu-user", "{}", common::brief(&c));
    for row in c["table"].as_array().unwrap() {
        let cat = row["category"].as_str().unwrap();
        if ["timed-sleep", "lock-wait", "fsync"].contains(&cat) {
            assert!(row["delta_s"].as_f64().unwrap().abs() < 0.02, "{row}");
        }
    }
}

#[test]
fn more_work_in_several_threads_is_more_work_not_spinning() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = workload();
    let c = explain_json(&[
        &format!("{} parallel 2 100", w.display()),
        &format!("{} parallel 2 300", w.display()),
    ]);
    if !check_pair(&c, "more_work_in_several_threads_is_more_work_not_spinning") {
        return;
    }
    // More user CPU; on a machine with more runnable work than cores, the
    // wait for a core can outgrow it, and user CPU is then the next cause.
    // Never spinning. Beside two CPU hogs, 3 runs a side may leave the user
    // CPU within its noise (CI: p=0.055, so the diagnosis said "no single
    // cause"), but its evidence still says what kind of change it is.
    let kinds: Vec<&str> = c["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["kind"].as_str())
        .collect();
    let user_evidence = c["causes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["kind"] == "cpu-user")
        .and_then(|x| x["evidence"].as_str())
        .unwrap_or("");
    match top(&c).0 {
        "cpu-user" => assert!(
            c["diagnosis"].as_str().unwrap().contains("more work")
                || user_evidence.contains("more work"),
            "{}",
            common::brief(&c)
        ),
        "run-queue" => assert!(
            kinds.contains(&"cpu-user"),
            "{kinds:?}: {}",
            common::brief(&c)
        ),
        other => panic!("{other}: {}", common::brief(&c)),
    }
    assert!(!kinds.contains(&"spinning"), "{kinds:?}");
}

/// The ptrace recorder: a new thread is not a new process. Four threads
/// started (and no process) count no process creation but the one exec.
#[test]
fn the_fallback_counts_thread_starts_as_no_process_creation() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = workload();
    let t = explain_json(&[
        "--recorder",
        "ptrace",
        "--runs",
        "1",
        "--",
        &w.to_string_lossy(),
        "parallel",
        "4",
        "100",
    ]);
    if !traced(
        &t,
        "the_fallback_counts_thread_starts_as_no_process_creation",
    ) {
        return;
    }
    let run = &t["runs"][0];
    assert_eq!(run["threads"], 5, "{run}");
    let forks = run["syscalls"]["fork"]["count"].as_u64().unwrap_or(0);
    assert_eq!(forks, 0, "thread starts counted as forks: {run}");
}

/// tardy in a PID namespace whose /proc is the host's (`unshare -p -f`
/// without --mount-proc): /proc/N is another process there, so each task is
/// found by its namespace id. A CPU-bound program is CPU, not block I/O or
/// other (it was 0.2% CPU and 48% "block I/O" read from the wrong tasks).
#[test]
fn in_a_pid_namespace_the_fallback_reads_the_right_tasks() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let can = std::process::Command::new("unshare")
        .args(["-p", "-f", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !can {
        eprintln!(
            "SKIPPED in_a_pid_namespace_the_fallback_reads_the_right_tasks: unshare -p is not allowed here"
        );
        return;
    }
    let w = workload();
    let out = std::process::Command::new("unshare")
        .args(["-p", "-f"])
        .arg(tardy_bin())
        .args(["explain", "--json", "--runs", "1", "--"])
        .arg(&w)
        .args(["compute", "1500"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t: Value = serde_json::from_slice(&out.stdout).unwrap();
    if !traced(&t, "in_a_pid_namespace_the_fallback_reads_the_right_tasks") {
        return;
    }
    let run = &t["runs"][0];
    let c = &run["categories"];
    let wall = run["wall_s"].as_f64().unwrap();
    let cpu = ["cpu-user", "cpu-system", "run-queue"]
        .iter()
        .map(|k| c[*k].as_f64().unwrap_or(0.0))
        .sum::<f64>();
    assert!(cpu >= 0.6 * wall, "CPU-bound, yet: {c}");
    assert!(run["cpu_user_s"].as_f64().unwrap() > 0.3 * wall, "{run}");
}

/// A storm of wake-ups (eight thread pairs handing a byte back and forth:
/// two million kernel events a run on two CPUs) is read whole: the rings
/// are sized for the CPU count and drained as they fill, and the reader is
/// not starved by the threads it watches. The JSON says how many events
/// the kernel dropped, and their share.
#[test]
fn a_wake_up_storm_loses_no_events() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = workload();
    let t = explain_json(&[
        "--runs",
        "1",
        "--",
        &w.to_string_lossy(),
        "pingpong",
        "8",
        "30000",
    ]);
    let o = &t["overhead"];
    let lost = t["runs"][0]["lost_events"].as_u64().unwrap_or(0);
    if o["recorder"] == "kernel-events" && lost > 0 {
        // Beside two CPU hogs a debug build's reader gets too little CPU
        // and the kernel drops events (about a million of three here, in
        // every loaded run): then the loss must be said, exactly, in the
        // JSON and in the coverage note, never hidden behind a full
        // breakdown. The no-loss budget holds where the reader has a CPU
        // (and in bench/explain.sh's release storm rows).
        let read = o["events_per_run"].as_f64().unwrap();
        let dropped = o["dropped_events_per_run"].as_f64().unwrap();
        let share = o["dropped_share"].as_f64().unwrap();
        assert!(read > 200_000.0, "{o}");
        assert_eq!(dropped, lost as f64, "{o}");
        assert!((share - dropped / (dropped + read)).abs() < 1e-9, "{o}");
        assert_ne!(t["coverage"], "full", "a lossy run called full: {o}");
        assert!(
            t["coverage_note"]
                .as_str()
                .is_some_and(|n| n.contains(&format!("dropped {lost} events"))),
            "{}",
            t["coverage_note"]
        );
        eprintln!(
            "LOADED a_wake_up_storm_loses_no_events: {lost} events dropped beside other load ({:.1}%), said in the JSON and the note",
            share * 100.0
        );
        return;
    }
    if !traced(&t, "a_wake_up_storm_loses_no_events") {
        return;
    }
    if o["recorder"] != "kernel-events" {
        eprintln!("SKIPPED a_wake_up_storm_loses_no_events: the ptrace recorder is used here");
        return;
    }
    assert!(o["events_per_run"].as_f64().unwrap() > 200_000.0, "{o}");
    assert_eq!(o["dropped_events_per_run"].as_f64(), Some(0.0), "{o}");
    assert_eq!(o["dropped_share"].as_f64(), Some(0.0), "{o}");
    assert_eq!(t["runs"][0]["lost_events"].as_u64(), Some(0), "{o}");
}

/// Each recorder on a command that reads stdin to its end and prints
/// 40,000 lines to stdout and 10,000 to stderr.
#[test]
fn commands_that_print_and_read_stdin_are_explained_by_both_recorders() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = workload();
    for recorder in ["auto", "ptrace"] {
        let out = common::cmd()
            .args([
                "explain",
                "--json",
                "--runs",
                "2",
                "--recorder",
                recorder,
                "--",
            ])
            .arg(&w)
            .args(["chatter", "40000"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{recorder}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let t: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(t["runs"][0]["exit_code"], 0);
        sums_to_wall(&t);
        if recorder == "ptrace" {
            assert_eq!(t["overhead"]["recorder"], "ptrace");
        }
    }
    // And through a shell, printing with echo and a pipe.
    let t = explain_json(&[
        "--runs",
        "1",
        "sh -c 'seq 1 30000; seq 1 20000 >&2; cat; seq 1 5000 | wc -l'",
    ]);
    assert_eq!(t["runs"][0]["exit_code"], 0);
    sums_to_wall(&t);
}

/// The fallback never stops at reads or writes: a program making 40,000 of
/// each costs it a handful of stops, not 80,000 round trips.
#[test]
fn the_fallback_does_not_stop_at_every_read() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = workload();
    let t = explain_json(&[
        "--runs",
        "1",
        "--recorder",
        "ptrace",
        &format!("sh -c '{} chatter 40000 | cat > /dev/null'", w.display()),
    ]);
    if !traced(&t, "the_fallback_does_not_stop_at_every_read") {
        return;
    }
    let stops = t["overhead"]["stops_per_run"].as_f64().unwrap();
    assert!(stops < 200.0, "{stops} stops");
}

/// Short processes, with the kernel's events on the command's cgroup and
/// inherited by each task: every process is seen, nothing of the path is
/// left unattributed (a reaped task's last switch reads as pid -1 on events
/// of a whole CPU: never a process, never a kill), and the session's cgroup
/// is gone when tardy exits.
#[test]
fn short_processes_are_all_seen_in_both_event_scopes() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cmd = "sh -c 'i=0; while [ $i -lt 100 ]; do /bin/true; i=$((i+1)); done'";
    for inherited in [false, true] {
        let mut c = std::process::Command::new(tardy_bin());
        c.env("NO_COLOR", "1").args([
            "explain",
            "--json",
            "--runs",
            "2",
            "--recorder",
            "auto",
            cmd,
        ]);
        if inherited {
            c.env("TARDY_NO_CGROUP", "1");
        }
        let child = c
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let t: Value = serde_json::from_slice(&out.stdout).unwrap();
        if t["overhead"]["recorder"] != "kernel-events" {
            eprintln!(
                "SKIPPED short_processes_are_all_seen_in_both_event_scopes: the kernel recorder is unavailable here ({})",
                t["overhead"]["fallback"]
            );
            return;
        }
        let spots = t["overhead"]["blind_spots"].as_str().unwrap_or("");
        if inherited {
            assert!(spots.contains("inherited"), "{spots}");
        } else {
            eprintln!("event scope: {spots}");
        }
        sums_to_wall(&t);
        for run in t["runs"].as_array().unwrap() {
            assert_eq!(run["processes"], 101, "{run:#}");
            let other = run["categories"]["other"].as_f64().unwrap();
            let wall = run["wall_s"].as_f64().unwrap();
            assert!(other <= 0.02 * wall, "other {other} of {wall}");
        }
        // No cgroup left behind by that tardy.
        let left = std::process::Command::new("find")
            .args(["/sys/fs/cgroup", "-maxdepth", "6", "-name"])
            .arg(format!("tardy-{pid}"))
            .output()
            .unwrap();
        assert!(
            left.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&left.stdout)
        );
    }
}

/// The cause with the largest share of the difference (significant or not).
fn biggest_cause(c: &Value) -> &Value {
    c["causes"]
        .as_array()
        .unwrap()
        .iter()
        .max_by(|a, b| {
            a["share"]
                .as_f64()
                .unwrap_or(0.0)
                .total_cmp(&b["share"].as_f64().unwrap_or(0.0))
        })
        .unwrap()
}

fn top_driver(c: &Value) -> (&str, &str) {
    (
        c["causes"][0]["kind"].as_str().unwrap_or(""),
        c["causes"][0]["driver"].as_str().unwrap_or(""),
    )
}

#[test]
fn causes_name_their_driver() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = workload();
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let d = dir.path().display();
    // 10 vs 200 fsyncs of the same cost: more calls, not a slow device.
    let c = explain_json(&[
        "--runs",
        "4",
        &format!("{} fsync 10 {d}", w.display()),
        &format!("{} fsync 200 {d}", w.display()),
    ]);
    if check_pair(&c, "causes_name_their_driver") {
        assert_eq!(
            top_driver(&c),
            ("fsync", "more-calls"),
            "{}",
            common::brief(&c)
        );
        let cause = &c["causes"][0];
        assert!(cause["count_b"].as_f64().unwrap() >= 190.0, "{cause}");
        assert!(cause["count_a"].as_f64().unwrap() <= 20.0, "{cause}");
        assert!(
            !cause["evidence"].as_str().unwrap().contains("device"),
            "{cause}"
        );
    }
    // Sleeps that ask for longer.
    let c = explain_json(&["--runs", "4", "sleep 0.02", "sleep 0.15"]);
    if check_pair(&c, "causes_name_their_driver") {
        assert_eq!(
            top_driver(&c),
            ("timed-sleep", "longer-asked"),
            "{}",
            common::brief(&c)
        );
        assert!(
            !c["diagnosis"].as_str().unwrap().contains("coarse"),
            "{}",
            common::brief(&c)
        );
    }
    // 150 processes against a shell loop that starts none.
    let c = explain_json(&[
        "sh -c 'i=0; while [ $i -lt 150 ]; do i=$((i+1)); done'",
        "sh -c 'i=0; while [ $i -lt 150 ]; do /bin/true; i=$((i+1)); done'",
    ]);
    if check_pair(&c, "causes_name_their_driver") {
        assert_eq!(
            top_driver(&c),
            ("more-processes", "more-calls"),
            "{}",
            common::brief(&c)
        );
        assert!(
            !c["diagnosis"].as_str().unwrap().contains("Vivaldi"),
            "{}",
            common::brief(&c)
        );
    }
}

#[test]
fn a_clean_large_difference_is_significant_with_three_runs() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let c = explain_json(&["--runs", "3", "sleep 0.01", "sleep 0.3"]);
    assert_eq!(c["significant"], true, "{}", common::brief(&c));
    assert!(!c["causes"].as_array().unwrap().is_empty());
    // A against itself: never a wall difference said, never a certain
    // cause. Six runs a side: with three, a category completely separated
    // by chance (1 in 10 for each) and a small spread read as certain often
    // enough under two CPU hogs to fail here (a system CPU of -0.5 ms in
    // 52 ms runs). A category beyond its noise after Holm's correction is
    // allowed: that happens in up to one A/A set in twenty by design (CI
    // once saw "User CPU +45 µs a run (p=0.035)" here), and the rate itself
    // is held by verdicts.rs's A/A property over thousands of sets.
    let c = explain_json(&["--runs", "6", "sleep 0.05", "sleep 0.05"]);
    let d = c["diagnosis"].as_str().unwrap();
    if c["significant"] == false {
        assert!(
            d.starts_with("No difference") || d.contains("within the run-to-run noise"),
            "{d}"
        );
    }
    for cause in c["causes"].as_array().unwrap() {
        assert_ne!(cause["verdict"], "certain", "{}", common::brief(&c));
    }
}

#[test]
fn an_unquoted_command_gets_a_hint_and_foreign_files_are_not_traces() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let out = common::cmd()
        .args(["explain", "sleep", "0.1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("quote it") && err.contains("-- sleep 0.1"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("random.json");
    let bytes: Vec<u8> = (0..512u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&junk, bytes).unwrap();
    let out = common::cmd().arg("explain").arg(&junk).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a tardy trace"), "{err}");
    assert!(!err.contains("NaN"), "{err}");
}

#[test]
fn one_command_text_json_save_and_compare_saved() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    let out = common::cmd()
        .args(["explain", "--runs", "2", "--save"])
        .arg(&a)
        .args(["--", "sh", "-c", "sleep 0.05; sleep 0.05"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("where the wall time went"), "{text}");
    assert!(text.contains("timed-sleep"), "{text}");
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    assert_eq!(t["schema"], "tardy.trace");
    assert_eq!(t["schema_version"], 1);
    assert_eq!(t["runs"].as_array().unwrap().len(), 2);
    sums_to_wall(&t);
    assert!(t["histograms"].is_object());
    assert!(t["overhead"]["stops_per_run"].as_f64().unwrap() > 0.0);
    common::cmd()
        .args(["explain", "--runs", "2", "--save"])
        .arg(&b)
        .args(["sleep 0.2"])
        .assert()
        .success();
    let out = common::cmd()
        .args(["explain", "--json"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert!(out.status.success());
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(top(&c).0, "timed-sleep", "{}", common::brief(&c));
    let warn = c["warnings"].to_string();
    assert!(warn.contains("different commands"), "{warn}");
    // tardy report draws the two traces as stacked bars.
    let html = dir.path().join("r.html");
    common::cmd()
        .args(["report", "--no-history", "-o"])
        .arg(&html)
        .arg(&a)
        .arg(&b)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Where the time went"), "{page}");
    assert!(page.contains("<title>timed-sleep:"), "{page}");
    assert!(!page.contains("<script"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let refuse = |args: &[&str], needle: &str| {
        let out = common::cmd().arg("explain").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(err.trim().lines().count() <= 2, "{err}");
    };
    refuse(&["--", "definitely-not-a-program-xyz"], "not found");
    refuse(&["sh -c 'echo broken >&2; exit 3'"], "exited with code 3");
    refuse(&["sh -c 'echo broken >&2; exit 3'"], "broken");
    refuse(&[], "nothing to explain");
    refuse(&["a", "b", "c"], "at most two");
    let results = dir.path().join("results.json");
    std::fs::write(&results, r#"{"schema":"tardy.results","schema_version":1}"#).unwrap();
    refuse(&[results.to_str().unwrap(), "true"], "not a tardy trace");
    let newer = dir.path().join("newer.json");
    std::fs::write(&newer, r#"{"schema":"tardy.trace","schema_version":99}"#).unwrap();
    refuse(&[newer.to_str().unwrap()], "newer");
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"schema\": \"tardy.trace\",\n  \"runs\": [1,").unwrap();
    refuse(&[broken.to_str().unwrap()], "broken.json:2:");
    let wrong = dir.path().join("wrong.json");
    std::fs::write(
        &wrong,
        r#"{"schema":"tardy.trace","schema_version":1,"runs":"many"}"#,
    )
    .unwrap();
    refuse(&[wrong.to_str().unwrap()], "wrong.json");
}

#[test]
fn a_failing_command_can_be_explained_with_ignore_failure() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t = explain_json(&["--runs", "1", "-i", "sh -c 'sleep 0.02; exit 4'"]);
    assert_eq!(t["runs"][0]["exit_code"], 4);
}

#[test]
fn without_tracing_it_says_what_is_missing() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t = explain_json(&["--no-trace", "--runs", "2", "--", "sleep", "0.05"]);
    assert_eq!(t["coverage"], "untraced");
    sums_to_wall(&t);
    let out = common::cmd()
        .args([
            "explain",
            "--no-trace",
            "--runs",
            "1",
            "--",
            "sleep",
            "0.01",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("not traced (--no-trace)"));
}

#[test]
fn processes_that_outlive_the_command_are_named() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t = explain_json(&[
        "--runs",
        "1",
        "--straggler-wait",
        "0.3",
        "sh -c 'sleep 30 & exit 0'",
    ]);
    let s = t["runs"][0]["stragglers"].to_string();
    assert!(s.contains("sleep 30"), "{t:#}");
    assert!(t["wall_s"].as_f64().unwrap() < 5.0);
}

#[test]
fn ctrl_c_explains_the_runs_completed() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let child = std::process::Command::new(tardy_bin())
        .args(["explain", "--json", "--runs", "100", "--", "sleep", "0.2"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Long enough for a few runs and the recorder's set-up between them,
    // on a loaded machine too (it starts in under a second there).
    std::thread::sleep(std::time::Duration::from_millis(3000));
    // SAFETY: signals our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let t: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = t["runs"].as_array().unwrap().len();
    assert!((1..100).contains(&runs), "{runs}");
    assert_eq!(t["interrupted"], true);
}

/// `--prepare` runs before every run, warm-up or recorded, and is neither
/// timed nor traced: a 1 s prepare leaves runs of `true` in milliseconds;
/// a failing one stops with its own words.
#[test]
fn prepare_runs_before_each_run_untimed() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("prep.log");
    let c = explain_json(&[
        "--runs",
        "3",
        "--warmup",
        "1",
        "--prepare",
        &format!("echo x >> {}; sleep 1", log.display()),
        "true",
        "sh -c true",
    ]);
    let lines = std::fs::read_to_string(&log).unwrap().lines().count();
    assert_eq!(lines, 2 + 6, "one prepare per warm-up and per run");
    for side in ["a", "b"] {
        for run in c[side]["runs"].as_array().unwrap() {
            let wall = run["wall_s"].as_f64().unwrap();
            assert!(wall < 0.8, "the prepare (1 s) was timed: {wall} s");
        }
    }
    let out = std::process::Command::new(tardy_bin())
        .args([
            "explain",
            "--runs",
            "2",
            "--prepare",
            "exit 3",
            "true",
            "true",
        ])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--prepare 'exit 3' failed") && !err.contains("--ignore-failure"),
        "{err}"
    );
}

/// A client and a server started from one script are two rows, each with
/// its pid and arguments (they were one "2x" row); three processes of one
/// command line stay three rows, and only more than eight become one row
/// with their count. Works with either recorder.
#[test]
fn process_rows_are_by_pid_and_arguments() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tcp.py"),
        r#"import socket, sys, time
if sys.argv[1] == "server":
    s = socket.socket()
    s.bind(("127.0.0.1", 0)); s.listen(1)
    open("port", "w").write(str(s.getsockname()[1]))
    c, _ = s.accept()
    for _ in range(50):
        d = c.recv(64)
        time.sleep(0.001)
        c.sendall(d)
else:
    for _ in range(500):
        try:
            c = socket.create_connection(("127.0.0.1", int(open("port").read()))); break
        except (OSError, ValueError):
            time.sleep(0.01)
    for _ in range(50):
        c.sendall(b"x" * 64); c.recv(64)
"#,
    )
    .unwrap();
    // The interpreter itself, not a version manager's shim (pyenv's are
    // shell scripts: dozens of processes of their own).
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    let python = String::from_utf8_lossy(&python.stdout).trim().to_string();
    let script = format!(
        "rm -f port; {python} tcp.py server & {python} tcp.py client; wait; \
         for i in 1 2 3; do sleep 0.4 & done; wait; \
         for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 0.3 & done; wait"
    );
    let out = common::cmd()
        .current_dir(dir.path())
        .args([
            "explain", "--json", "--runs", "1", "--warmup", "0", "--top", "50",
        ])
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t: Value = serde_json::from_slice(&out.stdout).unwrap();
    if !traced(&t, "process_rows_are_by_pid_and_arguments") {
        return;
    }
    let rows = t["runs"][0]["process_rows"].as_array().unwrap();
    let named = |needle: &str| -> Vec<&Value> {
        rows.iter()
            .filter(|r| r["command"].as_str().unwrap_or("").ends_with(needle))
            .collect()
    };
    for role in ["tcp.py server", "tcp.py client"] {
        let r = named(role);
        assert_eq!(r.len(), 1, "{role}: {rows:#?}");
        assert_eq!(r[0]["count"], 1);
        assert!(r[0]["pid"].as_i64().is_some_and(|p| p > 0), "{r:?}");
    }
    let three = named("sleep 0.4");
    assert_eq!(three.len(), 3, "{rows:#?}");
    let pids: std::collections::BTreeSet<i64> =
        three.iter().filter_map(|r| r["pid"].as_i64()).collect();
    assert_eq!(pids.len(), 3, "{three:?}");
    // The command line is read while the process lives; one the reader
    // reaches only after its exit (a loaded machine) is named by its file:
    // at least 9 of the 12 are read, one row.
    let twelve = named("sleep 0.3");
    assert_eq!(twelve.len(), 1, "{rows:#?}");
    assert!(
        twelve[0]["count"]
            .as_u64()
            .is_some_and(|n| (9..=12).contains(&n)),
        "{twelve:?}"
    );
    assert!(twelve[0].get("pid").is_none());
    // The text names each of the pair by its arguments and pid.
    let text = common::cmd()
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .args(["explain", "--runs", "1", "--warmup", "0", "--top", "50"])
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    for needle in [
        "tcp.py server  [pid ",
        "tcp.py client  [pid ",
        "x sleep 0.3\n",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
}

/// `--export-trace`: the median run's timeline as trace-event JSON that
/// ui.perfetto.dev opens as it is. Read back: every thread's slices follow
/// one another without overlapping, every arrow has both ends, each
/// process is named by its command, and the critical path is there and
/// adds up to the run's wall time, its sleeps to the five 2 ms sleeps.
#[test]
fn the_timeline_opens_in_perfetto_with_its_critical_path() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = workload();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trace.json");
    let c = explain_json(&[
        "--runs",
        "3",
        "--export-trace",
        file.to_str().unwrap(),
        &format!(
            "sh -c '{w} chatter 2000 </dev/null | cat >/dev/null; {w} sleeps 5 2'",
            w = w.display()
        ),
    ]);
    if !traced(&c, "the_timeline_opens_in_perfetto_with_its_critical_path") {
        return;
    }
    if c["overhead"]["recorder"] != "kernel-events" {
        eprintln!(
            "SKIPPED the_timeline_opens_in_perfetto_with_its_critical_path: no kernel events here"
        );
        return;
    }
    let t: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let wall_us = t["otherData"]["wall_ms"].as_f64().unwrap() * 1000.0;
    let ev = t["traceEvents"].as_array().unwrap();
    let mut by_thread: std::collections::HashMap<(i64, i64), Vec<(f64, f64)>> =
        std::collections::HashMap::new();
    let (mut path_us, mut path_sleep_us) = (0.0, 0.0);
    for e in ev.iter().filter(|e| e["ph"] == "X") {
        let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
        assert!(ts >= 0.0 && dur > 0.0, "{e}");
        if e["cat"] == "critical-path" {
            path_us += dur;
            if e["args"]["category"] == "timed-sleep" {
                path_sleep_us += dur;
            }
        } else {
            let key = (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap());
            by_thread.entry(key).or_default().push((ts, ts + dur));
        }
    }
    for (k, v) in by_thread.iter_mut() {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        for p in v.windows(2) {
            assert!(p[1].0 >= p[0].1 - 0.01, "thread {k:?}: {p:?} overlap");
        }
    }
    assert!(
        by_thread.len() >= 3,
        "sh, the workload and cat: {by_thread:?}"
    );
    assert!(
        (path_us - wall_us).abs() <= 0.1 * wall_us,
        "the critical path {path_us} us against the wall {wall_us} us"
    );
    assert!(
        path_sleep_us >= 9_000.0,
        "{path_sleep_us} us of sleeps on the path"
    );
    let ids = |ph: &str| -> std::collections::BTreeSet<i64> {
        ev.iter()
            .filter(|e| e["ph"] == ph)
            .map(|e| e["id"].as_i64().unwrap())
            .collect()
    };
    assert!(!ids("s").is_empty(), "no wake-up arrow");
    assert_eq!(ids("s"), ids("f"));
    let names: Vec<&str> = ev
        .iter()
        .filter(|e| e["name"] == "process_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert!(names.iter().any(|n| n.contains("cat")), "{names:?}");
    assert!(names.contains(&"critical path"), "{names:?}");
}

/// `--html`: one page with the causes, the categories, and both critical
/// paths (A's and B's runs of median wall time) on one time axis.
#[test]
fn the_html_page_draws_both_critical_paths() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("explain.html");
    let c = explain_json(&[
        "--runs",
        "3",
        "--html",
        page.to_str().unwrap(),
        "sh -c 'sleep 0.01'",
        "sh -c 'sleep 0.05'",
    ]);
    if !check_pair(&c, "the_html_page_draws_both_critical_paths") {
        return;
    }
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Why B is slower than A"), "no causes");
    assert!(
        html.contains("<td>timed-sleep</td>"),
        "the cause is not in the table"
    );
    if c["a"]["overhead"]["recorder"] == "kernel-events" {
        for side in ["A", "B"] {
            let row = format!("class=\"cp-row\" data-side=\"{side}\"");
            assert!(html.contains(&row), "no critical path for {side}");
        }
    }
}

/// `--pid`: a program already running (a shell loop that sleeps, starts a
/// process a turn and prints into a pipe) recorded for a while from
/// outside. Its threads and the processes it starts are seen, its time goes
/// mostly to its sleeps, and it runs on untouched after tardy is done.
#[test]
fn a_running_program_is_recorded_by_its_pid_and_left_running() {
    use std::io::BufRead;
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut prog = std::process::Command::new("sh")
        .args(["-c", "while :; do sleep 0.05; echo tick; done"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = prog.id().to_string();
    let mut lines = std::io::BufReader::new(prog.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "tick");
    let out = common::cmd()
        .args(["explain", "--json", "--pid", &pid, "--duration", "1.5"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let still_running = prog.try_wait().unwrap().is_none();
    // It printed on while recorded, and prints on after.
    let ticks = (0..5).filter(|_| lines.next().is_some()).count();
    let _ = prog.kill();
    let _ = prog.wait();
    if err.contains("not allowed here") {
        eprintln!("SKIPPED a_running_program_is_recorded_by_its_pid_and_left_running: {err}");
        return;
    }
    assert!(out.status.success(), "{err}");
    assert!(still_running, "the program did not outlive the recording");
    assert_eq!(ticks, 5);
    let t: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        t["command"]
            .as_str()
            .unwrap()
            .starts_with(&format!("pid {pid} (sh -c while")),
        "{}",
        t["command"]
    );
    let wall = t["wall_s"].as_f64().unwrap();
    assert!((1.4..10.0).contains(&wall), "recorded {wall} s for 1.5");
    sums_to_wall(&t);
    let (cause, secs) = t["categories"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_f64().unwrap()))
        .fold(("", 0.0), |a, b| if b.1 > a.1 { b } else { a });
    let share = secs / wall;
    assert!(
        cause == "timed-sleep" && share > 0.3,
        "top cause {cause} at {share:.2}: {}",
        t["categories"]
    );
    // The sleeps it started while recorded: one a turn, a dozen or more in
    // 1.5 s even beside CPU hogs.
    let run = &t["runs"][0];
    assert!(
        run["processes"].as_u64().unwrap() >= 8 && run["execs"].as_u64().unwrap() >= 7,
        "{run}"
    );
    assert_eq!(run["lost_events"].as_u64(), Some(0));
}

/// `--pid` alone: with a command, without a running process, and
/// `--duration` without `--pid` are each one clear line and exit 2.
#[test]
fn pid_is_checked_before_anything_is_recorded() {
    for (args, says) in [
        (&["--pid", "1", "true"][..], "cannot be used with"),
        (
            &["--pid", "2147483646", "--duration", "1"][..],
            "no running process has pid 2147483646",
        ),
        (&["--duration", "1", "true"][..], "--pid"),
        (&["--pid", "1", "--duration", "0"][..], "--duration 0"),
    ] {
        let out = common::cmd().arg("explain").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("not allowed here") {
            eprintln!("SKIPPED pid_is_checked_before_anything_is_recorded: {err}");
            return;
        }
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// Wake-up stacks: who ended each wait. Two threads passing a byte over a
/// socket pair wait in recv, each woken by the other: the waits carry
/// their wakers (this process, one of its threads, the function it woke
/// them from), in the text under each waiting function and in the JSON's
/// profile.
#[test]
fn each_waiting_function_says_who_woke_it() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = workload();
    let out = common::cmd()
        .args(["explain", "--runs", "1", "--save"])
        .arg(std::env::temp_dir().join(format!("tardy-wakers-{}.json", std::process::id())))
        .arg("--")
        .arg(&w)
        .args(["pingpong", "2", "3000"])
        .output()
        .unwrap();
    let saved = std::env::temp_dir().join(format!("tardy-wakers-{}.json", std::process::id()));
    let t: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    let _ = std::fs::remove_file(&saved);
    if !traced(&t, "each_waiting_function_says_who_woke_it") {
        return;
    }
    if t["overhead"]["recorder"] != "kernel-events" || t["profile"]["samples"].is_null() {
        eprintln!(
            "SKIPPED each_waiting_function_says_who_woke_it: no kernel events or no profile here"
        );
        return;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let p = &t["profile"];
    let f = p["functions"].as_array().unwrap();
    let wakes = p["wakes"].as_array().cloned().unwrap_or_default();
    let socket: Vec<&Value> = wakes.iter().filter(|w| w["kind"] == "pipe-read").collect();
    assert!(
        !socket.is_empty(),
        "no waker of a socket read: {}",
        p["wakes"]
    );
    let s: f64 = socket.iter().map(|w| w["s"][0].as_f64().unwrap()).sum();
    assert!(s > 0.0);
    for w in &socket {
        assert!(
            w["process"].as_str().unwrap().contains("workload pingpong"),
            "{w}"
        );
        let thread = w["thread"].as_str().unwrap();
        assert!(thread.contains("thread"), "{w}");
        // The waker's own stack, named.
        let names: Vec<&str> = w["waker"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                f[i.as_u64().unwrap() as usize]["function"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert!(names.iter().any(|n| !n.is_empty()), "{w}");
    }
    // The text names them under the waiting function.
    let waits = text
        .split("where the threads waited")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        waits.lines().any(|l| l.contains("pipe-read"))
            && waits
                .lines()
                .any(|l| l.trim_start().starts_with("woken by") && l.contains("thread")),
        "{waits}"
    );
}
