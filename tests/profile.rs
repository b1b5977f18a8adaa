//! `tardy explain`'s "which code": C programs where B spends its extra CPU
//! in one function (in the process itself, in a forked child, in a shared
//! library, and built without frame pointers), compiled here with cc; the
//! function must be named first with most of the CPU difference. The
//! exports are read back by real consumers (`go tool pprof -top`,
//! inferno-flamegraph or flamegraph.pl when installed). Runs are serialised.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use common::explain_json;
use serde_json::Value;

static SERIAL: Mutex<()> = Mutex::new(());

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/profile")
}

/// A directory with the fixtures compiled; `None` (with a printed reason)
/// without cc.
fn built(test: &str) -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), test)?;
    Some(dir)
}

/// Compile the fixtures into `dir`; `None` (with a printed reason) without cc.
fn build(dir: &Path, test: &str) -> Option<()> {
    let f = fixtures();
    let fp = ["-O1", "-g", "-fno-omit-frame-pointer"];
    let steps: Vec<Vec<String>> = vec![
        [&fp[..], &["-o", "hot"]]
            .concat()
            .iter()
            .map(|s| s.to_string())
            .chain([f.join("hot.c").display().to_string()])
            .collect(),
        ["-O2", "-fomit-frame-pointer", "-o", "hot_nofp"]
            .iter()
            .map(|s| s.to_string())
            .chain([f.join("hot.c").display().to_string()])
            .collect(),
        [&fp[..], &["-shared", "-fPIC", "-o", "libhot.so"]]
            .concat()
            .iter()
            .map(|s| s.to_string())
            .chain([f.join("libhot.c").display().to_string()])
            .collect(),
        [&fp[..], &["-pthread", "-o", "lockwait"]]
            .concat()
            .iter()
            .map(|s| s.to_string())
            .chain([f.join("lockwait.c").display().to_string()])
            .collect(),
        [&fp[..], &["-o", "uselib"]]
            .concat()
            .iter()
            .map(|s| s.to_string())
            .chain([
                f.join("uselib.c").display().to_string(),
                "-L.".into(),
                "-lhot".into(),
                format!("-Wl,-rpath,{}", dir.display()),
            ])
            .collect(),
    ];
    for args in steps {
        match std::process::Command::new("cc")
            .args(&args)
            .current_dir(dir)
            .status()
        {
            Ok(s) if s.success() => {}
            other => {
                eprintln!("SKIPPED {test}: cannot compile the fixtures with cc ({other:?})");
                return None;
            }
        }
    }
    Some(())
}

/// False (with a printed reason) when the kernel-event recorder did not run.
fn profiled(t: &Value, test: &str) -> bool {
    if t["overhead"]["recorder"] == "kernel-events" {
        return true;
    }
    eprintln!(
        "SKIPPED {test}: the kernel-event recorder is unavailable here ({})",
        t["overhead"]["fallback"]
    );
    false
}

fn first_function(c: &Value) -> (&str, f64) {
    let f = &c["functions"][0];
    (
        f["function"].as_str().unwrap_or(""),
        f["share"].as_f64().unwrap_or(0.0),
    )
}

#[test]
fn the_function_that_grew_is_named_first_wherever_it_runs() {
    let test = "the_function_that_grew_is_named_first_wherever_it_runs";
    let Some(dir) = built(test) else { return };
    // Compiled before taking the lock: another test's runs go on meanwhile.
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = dir.path().display();
    // A: 30M steps of parse_input and 10M of the checksum; B: 130M of it.
    for (what, a, b, function, file) in [
        (
            "itself",
            format!("{d}/hot 30 10"),
            format!("{d}/hot 30 130"),
            "checksum_blocks",
            Some("hot.c"),
        ),
        (
            "a child",
            format!("{d}/hot 30 10 child"),
            format!("{d}/hot 30 130 child"),
            "checksum_blocks",
            Some("hot.c"),
        ),
        (
            "a shared library",
            format!("{d}/uselib 30 10"),
            format!("{d}/uselib 30 130"),
            "lib_checksum",
            Some("libhot.c"),
        ),
        (
            "no frame pointers",
            format!("{d}/hot_nofp 30 10"),
            format!("{d}/hot_nofp 30 130"),
            "checksum_blocks",
            None,
        ),
    ] {
        let c = explain_json(&["--runs", "3", &a, &b]);
        if !profiled(&c["a"], test) {
            return;
        }
        let (name, share) = first_function(&c);
        assert_eq!(name, function, "{what}: {:#}", c["functions"]);
        assert!(share >= 0.5, "{what}: {share} of the difference");
        let f = &c["functions"][0];
        assert!(
            f["b_s"].as_f64().unwrap() > 5.0 * f["a_s"].as_f64().unwrap(),
            "{what}: {f}"
        );
        if let Some(file) = file {
            assert!(
                f["file"].as_str().unwrap_or("").ends_with(file),
                "{what}: {f}"
            );
            assert!(f["line"].as_u64().is_some(), "{what}: {f}");
        }
        let s = c["functions_summary"].as_str().unwrap_or("");
        assert!(s.contains(function), "{what}: {s}");
        if what == "no frame pointers" {
            // Unwound from the copy of the stack: the caller is there too.
            let p = &c["b"]["profile"];
            let names = |st: &Value| -> Vec<String> {
                st["frames"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| {
                        p["functions"][f.as_u64().unwrap() as usize]["function"]
                            .as_str()
                            .unwrap_or("")
                            .to_string()
                    })
                    .collect()
            };
            let has_caller = p["stacks"].as_array().unwrap().iter().any(|st| {
                let n = names(st);
                n.windows(2).any(|w| w[0] == "main" && w[1] == function)
            });
            assert!(
                has_caller,
                "{what}: no stack with main calling {function}: {:#}",
                p["stacks"]
            );
        }
    }
}

#[test]
fn the_function_that_waits_for_a_lock_is_named_from_off_cpu_stacks() {
    let test = "the_function_that_waits_for_a_lock_is_named_from_off_cpu_stacks";
    let Some(dir) = built(test) else { return };
    // Compiled before taking the lock: another test's runs go on meanwhile.
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = dir.path().display();
    // B's worker holds the table's lock six times longer each round; the
    // main thread's lookup_entry waits for it (through pthread_mutex_lock,
    // in a C library built without frame pointers).
    let (a, b) = (format!("{d}/lockwait 40 10"), format!("{d}/lockwait 40 60"));
    let c = explain_json(&["--runs", "3", &a, &b]);
    if !profiled(&c["a"], test) {
        return;
    }
    let waits = c["waiting_functions"].as_array().unwrap();
    let first = &waits[0];
    assert_eq!(first["function"], "lookup_entry", "{waits:#?}");
    assert_eq!(first["kind"], "futex-wait", "{first}");
    assert!(
        first["through"]
            .as_str()
            .unwrap_or("")
            .contains("pthread_mutex_lock"),
        "{first}"
    );
    assert!(first["share"].as_f64().unwrap() >= 0.5, "{first}");
    assert!(
        first["b_s"].as_f64().unwrap() > 3.0 * first["a_s"].as_f64().unwrap(),
        "{first}"
    );
    assert!(
        first["file"].as_str().unwrap_or("").ends_with("lockwait.c"),
        "{first}"
    );
    let s = c["waits_summary"].as_str().unwrap_or("");
    assert!(
        s.starts_with("lock waits +") && s.contains("lookup_entry"),
        "{s}"
    );
    // The extra CPU is the holder's real work, not spinning.
    assert_ne!(c["causes"][0]["kind"], "spinning", "{:#}", c["causes"]);
    assert_eq!(c["functions"][0]["function"], "rebuild_table");
    // The text says it in its own section.
    let out = common::cmd()
        .args(["explain", "--runs", "2", &a, &b])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("where the threads waited"), "{text}");
    assert!(text.contains("`lookup_entry`"), "{text}");
    // One side alone lists where its threads waited.
    let one = common::cmd()
        .args(["explain", "--runs", "1", &b])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&one.stdout);
    assert!(
        text.contains("where the threads waited") && text.contains("lookup_entry"),
        "{text}"
    );
}

#[test]
fn exports_are_read_by_pprof_and_flame_graph_tools_and_saved_traces_keep_the_profile() {
    let test = "exports_are_read_by_pprof_and_flame_graph_tools_and_saved_traces_keep_the_profile";
    let Some(dir) = built(test) else { return };
    // Compiled before taking the lock: another test's runs go on meanwhile.
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let p = |n: &str| dir.path().join(n).display().to_string();
    let out = common::cmd()
        .args([
            "explain",
            "--runs",
            "2",
            "--save",
            &p("a.json"),
            "--save-b",
            &p("b.json"),
        ])
        .args([
            "--export-folded-b",
            &p("b.folded"),
            "--export-pprof-b",
            &p("b.pb.gz"),
        ])
        .arg(format!("{} 40 10", p("hot")))
        .arg(format!("{} 40 200", p("hot")))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let a: Value = serde_json::from_str(&std::fs::read_to_string(p("a.json")).unwrap()).unwrap();
    if !profiled(&a, test) {
        return;
    }
    assert!(text.contains("which code"), "{text}");
    // Folded: "frame;frame;frame COUNT" lines, the hot function in the heaviest.
    let folded = std::fs::read_to_string(p("b.folded")).unwrap();
    for line in folded.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        assert!(!stack.is_empty() && n.parse::<u64>().is_ok(), "{line}");
    }
    assert!(
        folded.lines().next().unwrap().contains("checksum_blocks"),
        "{folded}"
    );
    let flamegraph = ["inferno-flamegraph", "flamegraph.pl"]
        .into_iter()
        .find(|t| which(t));
    match flamegraph {
        Some(tool) => {
            let svg = std::process::Command::new(tool)
                .arg(p("b.folded"))
                .output()
                .unwrap();
            assert!(
                svg.status.success(),
                "{tool}: {}",
                String::from_utf8_lossy(&svg.stderr)
            );
            assert!(String::from_utf8_lossy(&svg.stdout).contains("checksum_blocks"));
        }
        None => eprintln!(
            "SKIPPED part of {test}: neither inferno-flamegraph nor flamegraph.pl is installed (cargo install inferno)"
        ),
    }
    if which("go") {
        let top = std::process::Command::new("go")
            .args(["tool", "pprof", "-top"])
            .arg(p("b.pb.gz"))
            .output()
            .unwrap();
        let listing = String::from_utf8_lossy(&top.stdout);
        assert!(
            top.status.success(),
            "{}",
            String::from_utf8_lossy(&top.stderr)
        );
        let first = listing
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("flat"))
            .nth(1)
            .unwrap_or("");
        assert!(first.contains("checksum_blocks"), "{listing}");
        // The command's program is pprof's main binary ("Main binary
        // filename not available" without it): named first, with its path.
        assert!(listing.starts_with("File: hot\n"), "{listing}");
        let raw = std::process::Command::new("go")
            .args(["tool", "pprof", "-raw"])
            .arg(p("b.pb.gz"))
            .output()
            .unwrap();
        let raw = String::from_utf8_lossy(&raw.stdout);
        let first_mapping = raw
            .lines()
            .skip_while(|l| *l != "Mappings")
            .nth(1)
            .unwrap_or("");
        assert!(first_mapping.contains(&p("hot")), "{raw}");
    } else {
        eprintln!(
            "SKIPPED part of {test}: go is not installed (go tool pprof reads the pprof file)"
        );
    }
    // The saved traces compared later: the same function, from the files.
    let c = explain_json(&[&p("a.json"), &p("b.json")]);
    assert_eq!(
        first_function(&c).0,
        "checksum_blocks",
        "{:#}",
        c["functions"]
    );
    // tardy report draws B against A as a differential flame graph.
    let out = common::cmd()
        .args(["report", &p("a.json"), &p("b.json"), "-o", &p("r.html")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(p("r.html")).unwrap();
    assert!(html.contains("Which code: B against A"), "{html}");
    let tip = html
        .split("<title>")
        .find(|t| t.starts_with("checksum_blocks: A "))
        .expect("a box for the hot function");
    assert!(tip.contains(", B ") && tip.contains("(+"), "{tip}");
    // A saved profile that names a function it does not hold is refused in
    // one line, and the file is left as it was.
    let mut bad = a.clone();
    bad["profile"]["stacks"][0]["frames"]
        .as_array_mut()
        .unwrap()
        .push(Value::from(1_000_000));
    let text = bad.to_string();
    std::fs::write(p("bad.json"), &text).unwrap();
    let out = common::cmd()
        .args(["explain", &p("bad.json"), &p("b.json")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.json") && err.contains("out of range"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(p("bad.json")).unwrap(), text);
}

#[test]
fn without_kernel_events_it_says_the_profile_is_missing() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t = explain_json(&["--runs", "1", "--recorder", "ptrace", "sleep 0.01"]);
    assert!(t.get("profile").is_none());
    let note = t["profile_note"].as_str().unwrap();
    assert!(note.contains("kernel-event recorder"), "{note}");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.folded");
    let out = common::cmd()
        .args([
            "explain",
            "--runs",
            "1",
            "--recorder",
            "ptrace",
            "--export-folded",
        ])
        .arg(&f)
        .arg("sleep 0.01")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("--export-folded") && errors[0].contains("no CPU profile"),
        "{stderr}"
    );
    assert!(!f.exists());
    // --profile-hz 0: no profile and nothing said about it.
    let t = explain_json(&["--runs", "1", "--profile-hz", "0", "sleep 0.01"]);
    assert!(
        t.get("profile").is_none() && t.get("profile_note").is_none(),
        "{t:#}"
    );
}

fn which(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

/// JavaScript compiled by V8: named from Node's perf map (--perf-basic-prof).
#[test]
fn jit_code_is_named_from_the_runtime_perf_map() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let test = "jit_code_is_named_from_the_runtime_perf_map";
    if !which("node") {
        eprintln!("SKIPPED {test}: node is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let js = dir.path().join("hot.js");
    std::fs::write(
        &js,
        "function checksum(n){let s=0;for(let i=0;i<n;i++)s=(s*31+i)|0;return s}\n\
         function parse(n){let s=0;for(let i=0;i<n;i++)s^=i*7;return s}\n\
         const [a,b]=process.argv.slice(2).map(Number);\n\
         console.log(parse(a*1e6)+checksum(b*1e6));\n",
    )
    .unwrap();
    let run = |n: u32| format!("node --perf-basic-prof {} 30 {n}", js.display());
    // Node writes its logs where it runs: in the temporary directory.
    let cwd = dir.path().display().to_string();
    let c = explain_json(&["--runs", "3", "--cwd", &cwd, &run(10), &run(150)]);
    if !profiled(&c["a"], test) {
        return;
    }
    // Node leaves its perf maps in /tmp: remove those of processes gone.
    if let Ok(rd) = std::fs::read_dir("/tmp") {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name
                .strip_prefix("perf-")
                .and_then(|n| n.strip_suffix(".map"))
                .and_then(|n| n.parse::<u32>().ok())
                && !Path::new(&format!("/proc/{pid}")).exists()
                && std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("hot.js"))
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    let f = &c["functions"][0];
    assert!(
        f["function"].as_str().unwrap().contains("checksum") && f["module"] == "[jit]",
        "{:#}",
        c["functions"]
    );
    assert!(f["share"].as_f64().unwrap() >= 0.5, "{f}");
}

#[test]
fn help_says_what_is_sampled_and_how_to_export_it() {
    let out = common::cmd().args(["explain", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for want in [
        "call stack is also sampled",
        "--profile-hz",
        "--export-folded",
        "--export-pprof",
        "go tool pprof",
    ] {
        assert!(help.contains(want), "{want}: {help}");
    }
}

/// A stripped library (libc) is named from its separate debug file when
/// one is installed (`/usr/lib/debug/.build-id/...`, as `apt-get install
/// libc6-dbg` puts it): `msort_with_tmp` with its file and line, not
/// `libc.so.6+0x3fbfb`. Skipped, saying so, without the debug file.
#[test]
fn a_stripped_library_is_named_from_its_installed_debug_file() {
    let test = "a_stripped_library_is_named_from_its_installed_debug_file";
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("sortlib");
    let cc = std::process::Command::new("cc")
        .args(["-O1", "-g", "-o"])
        .arg(&bin)
        .arg(fixtures().join("sortlib.c"))
        .status();
    if !cc.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED {test}: cannot compile the fixture with cc");
        return;
    }
    // Which libc, and whether its debug file is installed.
    let ldd = std::process::Command::new("ldd")
        .arg(&bin)
        .output()
        .unwrap();
    let ldd = String::from_utf8_lossy(&ldd.stdout);
    let Some(libc) = ldd
        .lines()
        .find(|l| l.contains("libc.so"))
        .and_then(|l| l.split_whitespace().find(|w| w.starts_with('/')))
    else {
        eprintln!("SKIPPED {test}: no dynamically linked libc here");
        return;
    };
    let notes = std::process::Command::new("readelf")
        .args(["-n", libc])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .unwrap_or("")
        .to_string();
    let installed = id.len() > 2
        && std::path::Path::new(&format!(
            "/usr/lib/debug/.build-id/{}/{}.debug",
            &id[..2],
            &id[2..]
        ))
        .is_file();
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t = explain_json(&["--runs", "1", "--", &bin.display().to_string()]);
    if !profiled(&t, test) {
        return;
    }
    let functions = t["profile"]["functions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let libc_frames: Vec<&Value> = functions
        .iter()
        .filter(|f| {
            f["module"]
                .as_str()
                .is_some_and(|m| m.starts_with("libc.so"))
        })
        .collect();
    let named = libc_frames
        .iter()
        .any(|f| f["file"].is_string() && !f["function"].as_str().unwrap_or("").contains("+0x"));
    if !installed {
        eprintln!(
            "SKIPPED {test}: {libc}'s debug file is not installed (apt-get install libc6-dbg)"
        );
        return;
    }
    assert!(named, "{libc_frames:#?}");
}
