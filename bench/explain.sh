#!/usr/bin/env bash
# How much `tardy explain`'s tracing inflates the wall time of what it
# records, against strace, in one run (issue: "the observer effect is the
# point of the WebPagetest story").
#
# The command is the NUnit reproduction: a "suite" of 100 tests that each
# sleep 1 ms, as a Python script (python3 start-up makes ~700 syscalls, as a
# real runner does) and as examples/workload (a bare binary: almost every
# syscall it makes is a sleep, the worst case for tardy's ratio).
# Interleaved, ROUNDS times each:
#   plain          the command alone
#   tardy          the command under tardy's recorder (tardy explain --runs 1
#                  --overhead-check records one traced and one untraced run,
#                  both timed from fork to reap: their ratio is tardy's inflation)
#   strace         strace -f -c -w -o /dev/null CMD
#   strace-seccomp strace -f -c -w --seccomp-bpf -o /dev/null CMD (as the issue
#                  names it: with every syscall traced the filter stops at all)
#   strace-filter  strace -f -c -w --seccomp-bpf -e trace=<tardy's syscalls>
# strace's runs are timed from fork to reap by this driver, like plain.
# Prints each median and the inflation ratios. Needs: strace, python3.
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-15}
command -v strace >/dev/null || { echo "bench/explain.sh: strace is not installed (apt-get install strace)" >&2; exit 2; }
cargo build --release --quiet --example workload
WORKLOAD=$(realpath "${CARGO_TARGET_DIR:-target}")/release/examples/workload
cat > "$WORK/suite.py" <<'PY'
import time
for _ in range(100):
    time.sleep(0.001)
PY
# The system interpreter, not a version-manager shim (a shim is a shell script
# that starts a dozen processes first).
PYTHON=$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || command -v python3 )
python3 - "$TARDY" "$ROUNDS" "$WORK" "$PYTHON" "$WORKLOAD" <<'PY'
import json, statistics as st, subprocess, sys, time
tardy, rounds, work, python, workload = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
traced = ("nanosleep,clock_nanosleep,poll,ppoll,select,pselect6,epoll_wait,epoll_pwait,"
          "futex,wait4,waitid,read,readv,recvfrom,recvmsg,fork,vfork,clone,clone3,execve,"
          "execveat,fsync,fdatasync,sync_file_range,syncfs,sync,msync")
def timed(argv):
    t0 = time.perf_counter_ns()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter_ns() - t0) / 1e9
for name, cmd in [("python3 suite.py", [python, f"{work}/suite.py"]),
                  ("workload sleeps 100 1", [workload, "sleeps", "100", "1"])]:
    r = {k: [] for k in ["plain", "tardy-traced", "tardy-untraced", "strace", "strace-seccomp", "strace-filter"]}
    for i in range(rounds):
        steps = ["plain", "tardy", "strace", "strace-seccomp", "strace-filter"]
        if i % 2: steps.reverse()
        for s in steps:
            if s == "plain":
                r["plain"].append(timed(cmd))
            elif s == "tardy":
                out = subprocess.run([tardy, "explain", "--json", "--runs", "1", "--overhead-check",
                                      "--no-delayacct", "--"] + cmd,
                                     capture_output=True, check=True).stdout
                t = json.loads(out)
                r["tardy-traced"].append(t["runs"][0]["wall_s"])
                r["tardy-untraced"].append(t["overhead"]["untraced_wall_s"][0])
            elif s == "strace":
                r["strace"].append(timed(["strace", "-f", "-c", "-w", "-o", "/dev/null"] + cmd))
            elif s == "strace-seccomp":
                r["strace-seccomp"].append(timed(["strace", "-f", "-c", "-w", "--seccomp-bpf", "-o", "/dev/null"] + cmd))
            else:
                r["strace-filter"].append(timed(["strace", "-f", "-c", "-w", "--seccomp-bpf", "-e", "trace=" + traced, "-o", "/dev/null"] + cmd))
    m = {k: st.median(v) for k, v in r.items()}
    tardy_infl = m["tardy-traced"] / m["tardy-untraced"] - 1
    print(f"{name}: {rounds} interleaved rounds, medians")
    print(f"  plain {m['plain']*1e3:7.1f} ms   tardy untraced {m['tardy-untraced']*1e3:7.1f} ms   tardy traced {m['tardy-traced']*1e3:7.1f} ms")
    print(f"  tardy explain inflation      {tardy_infl*100:6.1f}%")
    for k in ["strace", "strace-seccomp", "strace-filter"]:
        infl = m[k] / m["plain"] - 1
        ratio = tardy_infl / infl if infl > 0 else float("nan")
        print(f"  {k:<15} inflation      {infl*100:6.1f}%   tardy/{k} = {ratio:.2f}x")
PY
