#!/usr/bin/env bash
# Counts against wall time under load: two C programs 0.5% apart in
# instructions, measured with `tardy run --metric instructions,wall` while two
# CPU hogs compete, then alone. Prints each metric's spread (relative range of
# the runs) loaded and quiet, and the cost of each backend against an
# uncounted run of the same program (cachegrind here; the PMU costs nothing,
# measured where one exists). One run prints every ratio.
#
# Usage: bench/counts.sh [RUNS]   (needs valgrind and a C compiler)
. "$(dirname "$0")/lib.sh"
runs=${1:-10}
cd "$WORK"
cat >work.c <<'C'
#include <stdio.h>
#ifndef N
#define N 3000000L
#endif
int main(void) {
    unsigned long h = 1469598103934665603UL;
    for (long i = 0; i < N; i++) { h ^= (unsigned long)i; h *= 1099511628211UL; }
    printf("%lu\n", h);
    return 0;
}
C
cc -O1 -DN=3000000L -o a work.c && cc -O1 -DN=3015000L -o b work.c
spread() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
def rr(v): return (max(v) - min(v)) / sorted(v)[len(v) // 2] * 100
for b in r["benchmarks"]:
    runs = [x for x in b["runs"] if not x["warmup"]]
    w = [x["net_wall_ns"] for x in runs]
    c = [x["counts"]["instructions"] for x in runs]
    print(f"  {b['name']:<6} wall spread {rr(w):7.3f}%   instructions spread {rr(c):7.4f}%")
for c in r["comparisons"]:
    e = c["estimate"]
    print(f"  {c.get('metric') or 'wall':<13} b/a {e['ratio']:.5f} verdict {e['verdict']}")
PY
}
echo "== two CPU hogs beside it, $runs runs a side"
(while :; do :; done) & h1=$!
(while :; do :; done) & h2=$!
"$TARDY" run -q --metric instructions,wall --runs "$runs" --export-json loaded.json ./a ./b >/dev/null 2>&1
kill $h1 $h2; wait $h1 $h2 2>/dev/null || true
spread loaded.json
echo "== quiet, $runs runs a side"
"$TARDY" run -q --metric instructions,wall --runs "$runs" --export-json quiet.json ./a ./b >/dev/null 2>&1
spread quiet.json
echo "== cost of a counted run against an uncounted one (median of $runs)"
"$TARDY" run -q --runs "$runs" --export-json plain.json ./a >/dev/null 2>&1
python3 - <<'PY'
import json, statistics, time, subprocess
plain = statistics.median(x["wall_ns"] for x in json.load(open("plain.json"))["benchmarks"][0]["runs"] if not x["warmup"])
def timed(cmd, n=5):
    t = []
    for _ in range(n):
        t0 = time.monotonic(); subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); t.append(time.monotonic() - t0)
    return statistics.median(t) * 1e9
for name, cmd in [("cachegrind, instructions", ["valgrind", "-q", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", "./a"]),
                  ("cachegrind, estimated-cycles", ["valgrind", "-q", "--tool=cachegrind", "--cache-sim=yes", "--cachegrind-out-file=/dev/null", "./a"])]:
    c = timed(cmd)
    print(f"  {name:<30} {c/1e6:8.1f} ms against {plain/1e6:6.2f} ms uncounted: {c/plain:5.1f}x")
PY
# The PMU path's own cost: the same timed runs with the trampoline's
# inherited counters open (a software event standing in where there is no
# PMU), against without, interleaved in one session each way.
TARDY_PMU_EVENT=task-clock "$TARDY" run -q --counter pmu --metric wall,instructions --runs "$runs" --export-json pmu.json ./a >/dev/null 2>&1
python3 - <<'PY'
import json, statistics
w = lambda f: statistics.median(x["wall_ns"] for x in json.load(open(f))["benchmarks"][0]["runs"] if not x["warmup"])
p, u = w("pmu.json"), w("plain.json")
print(f"  pmu (counters open, no extra run)  {p/1e6:8.2f} ms against {u/1e6:6.2f} ms uncounted: {p/u:5.2f}x")
PY
