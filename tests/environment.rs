//! tardy never changes what it measures: a command started by any of its
//! paths (run through the spawner, the trampoline or directly; explain's
//! recorder; exec) sees the same process state as under `sh -c`: signal
//! dispositions and mask, resource limits, nice value, affinity, umask and
//! open descriptors. The user's own settings (an ignored SIGHUP as under
//! nohup, a lower descriptor limit, a umask, a nice value, a descriptor
//! passed in) are handed on, not reset; Rust's ignored SIGPIPE is not.

mod common;

use std::path::{Path, PathBuf};

/// A program that writes its own process state to the file named by its
/// first argument: C, so no runtime of its own changes what it reports.
const ENVDUMP: &str = r#"
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
int main(int argc, char **argv) {
    FILE *out = fopen(argv[1], "w");
    if (!out) return 2;
    char line[512];
    FILE *st = fopen("/proc/self/status", "r");
    while (fgets(line, sizeof line, st))
        if (!strncmp(line, "SigIgn", 6) || !strncmp(line, "SigBlk", 6) ||
            !strncmp(line, "SigCgt", 6) || !strncmp(line, "Umask", 5) ||
            !strncmp(line, "Cpus_allowed_list", 17) || !strncmp(line, "NoNewPrivs", 10))
            fputs(line, out);
    fclose(st);
    FILE *lim = fopen("/proc/self/limits", "r");
    while (fgets(line, sizeof line, lim)) fputs(line, out);
    fclose(lim);
    fprintf(out, "nice %d\n", getpriority(PRIO_PROCESS, 0));
    int outfd = fileno(out);
    DIR *d = opendir("/proc/self/fd");
    int dfd = dirfd(d);
    struct dirent *e;
    int fds[256], n = 0;
    while ((e = readdir(d)) && n < 256) {
        if (e->d_name[0] == '.') continue;
        int fd = atoi(e->d_name);
        if (fd != dfd && fd != outfd) fds[n++] = fd;
    }
    closedir(d);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (fds[j] < fds[i]) { int t = fds[i]; fds[i] = fds[j]; fds[j] = t; }
    fputs("fds", out);
    for (int i = 0; i < n; i++) fprintf(out, " %d", fds[i]);
    fputs("\n", out);
    fclose(out);
    return 0;
}
"#;

fn compile(dir: &Path) -> Option<PathBuf> {
    let src = dir.join("envdump.c");
    std::fs::write(&src, ENVDUMP).unwrap();
    let bin = dir.join("envdump");
    let ok = std::process::Command::new("cc")
        .arg("-O2")
        .arg("-o")
        .arg(&bin)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("no C compiler (cc): skipping the process-state comparison");
        return None;
    }
    Some(bin)
}

/// Run `script` under `sh` with the user's settings: SIGHUP ignored (as
/// under nohup), a descriptor limit of 900, umask 027, nice 3 and
/// descriptor 7 open on /dev/null; `$T` is tardy, `$E` the dump program.
fn under_user_settings(dir: &Path, envdump: &Path, script: &str) {
    let tardy = assert_cmd::cargo::cargo_bin("tardy");
    let full = format!("trap '' HUP; ulimit -n 900; umask 027; exec 7</dev/null; {script}");
    let out = std::process::Command::new("nice")
        .args(["-n", "3", "sh", "-c", &full])
        .current_dir(dir)
        .env("T", &tardy)
        .env("E", envdump)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_path_hands_the_command_the_users_process_state() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let Some(envdump) = compile(dir) else { return };
    // The reference: the program started by the shell itself.
    under_user_settings(dir, &envdump, "\"$E\" sh.txt");
    let want = read(dir, "sh.txt");
    let ignored = want
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:\t"))
        .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
        .unwrap();
    assert!(
        ignored & 1 != 0 && ignored & (1 << 12) == 0,
        "SIGHUP ignored, SIGPIPE not: {want}"
    );
    assert!(want.contains("Umask:\t0027"), "{want}");
    assert!(want.contains("fds 0 1 2 7"), "{want}");
    let paths: &[(&str, &str)] = &[
        (
            "run",
            "\"$T\" run -N --runs 2 --show-output \"$E run.txt\" > /dev/null",
        ),
        (
            "trampoline",
            "TARDY_NO_SPAWNER=1 \"$T\" run -N --runs 2 --show-output \"$E trampoline.txt\" > /dev/null",
        ),
        (
            "direct",
            "TARDY_NO_TRAMPOLINE=1 \"$T\" run -N --runs 2 --show-output \"$E direct.txt\" > /dev/null",
        ),
        (
            "shell",
            "\"$T\" run --runs 2 --show-output '\"$E\" shell.txt' > /dev/null",
        ),
        (
            "explain",
            "\"$T\" explain --runs 1 --show-output -- \"$E\" explain.txt > /dev/null",
        ),
        ("exec", "\"$T\" exec --timer-slack 50000 -- \"$E\" exec.txt"),
    ];
    for (name, script) in paths {
        under_user_settings(dir, &envdump, script);
        let got = read(dir, &format!("{name}.txt"));
        // explain's ptrace fallback traces the command: NoNewPrivs is set
        // for its seccomp filter (and TracerPid, not dumped, names tardy).
        let got_cmp = if *name == "explain" {
            got.replace("NoNewPrivs:\t1", "NoNewPrivs:\t0")
        } else {
            got.clone()
        };
        assert_eq!(
            got_cmp, want,
            "{name}: the command's state differs from sh -c's\n--- sh -c\n{want}\n--- {name}\n{got}"
        );
    }
}

/// `yes | head`, the shell's classic: under tardy, `yes` dies quietly of
/// SIGPIPE as it does in a terminal (with SIGPIPE ignored it printed "yes:
/// standard output: Broken pipe", and went on writing until it noticed).
#[test]
fn a_pipeline_ends_quietly_on_sigpipe() {
    let d = tempfile::tempdir().unwrap();
    for no_spawner in [false, true] {
        let mut c = common::tardy(d.path());
        if no_spawner {
            c.env("TARDY_NO_SPAWNER", "1");
        }
        let out = c
            .args(["run", "--runs", "2", "--show-output"])
            .arg("yes | head -c 10 > /dev/null")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let all = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(!all.contains("Broken pipe"), "{all}");
    }
}
