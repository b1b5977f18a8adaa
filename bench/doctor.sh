#!/usr/bin/env bash
# `tardy doctor` in one run: the wall time of the full run and of --quick (median of REPS
# alternating runs; the issue's budgets are 10 s and 2 s), and two probes checked against
# their peer, `perf bench` (Debian's linux-perf), on the same machine in the same run:
#   null system call:  tardy's syscall/getppid   vs  perf bench syscall basic (getppid loop)
#   context switch:    tardy's ctxswitch/procs_1cpu x 2 (a round trip, both on one CPU)
#                      vs  taskset -c 0 perf bench sched pipe (two processes on CPU 0, one
#                      pipe round trip per op; unpinned, perf's figure swings 2-70 us here)
# Needs: a release build (made here), perf, python3.
. "$(dirname "$0")/lib.sh"
REPS=${REPS:-3}
tmp=$WORK
now() { date +%s%N; }
for i in $(seq "$REPS"); do
  t0=$(now); "$TARDY" doctor --json > "$tmp/full$i.json"; t1=$(now)
  "$TARDY" doctor --quick --json > "$tmp/quick$i.json"; t2=$(now)
  echo "$(( t1 - t0 )) $(( t2 - t1 ))" >> "$tmp/times"
done
perf_ok=1
command -v perf >/dev/null && perf bench syscall basic > "$tmp/perf-syscall.txt" 2>&1 \
  && taskset -c 0 perf bench sched pipe -l 20000 > "$tmp/perf-pipe.txt" 2>&1 || perf_ok=0
python3 - "$tmp" "$REPS" "$perf_ok" <<'PY'
import json, re, statistics as st, sys
d, reps, perf_ok = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
full, quick = zip(*[map(int, l.split()) for l in open(f"{d}/times")])
print(f"tardy doctor          {st.median(full)/1e9:6.2f} s wall (median of {reps})   budget 10 s: {'met' if st.median(full) < 10e9 else 'NOT met'}")
print(f"tardy doctor --quick  {st.median(quick)/1e9:6.2f} s wall (median of {reps})   budget 2 s: {'met' if st.median(quick) < 2e9 else 'NOT met'}")
def med(key_probe, key):
    vals = []
    for i in range(1, reps + 1):
        r = json.load(open(f"{d}/full{i}.json"))
        for p in r["probes"]:
            if p["id"] == key_probe:
                for m in p["measures"]:
                    if m["key"] == key:
                        vals.append(m["median"])
    return st.median(vals) if vals else None
if not perf_ok:
    print("perf bench unavailable: peer comparison skipped")
    sys.exit(0)
usecs = lambda f: float(re.search(r"([0-9.]+) usecs/op", open(f"{d}/{f}").read()).group(1)) * 1000
sc, pp = usecs("perf-syscall.txt"), usecs("perf-pipe.txt")
ts, tp = med("syscall", "getppid"), med("ctxswitch", "procs_1cpu")
print(f"null syscall:  tardy {ts:8.1f} ns   perf bench syscall basic {sc:8.1f} ns   ratio tardy/perf {ts/sc:.2f}")
print(f"pipe round trip, one CPU: tardy {2*tp/1000:6.2f} us   perf bench sched pipe {pp/1000:6.2f} us   ratio tardy/perf {2*tp/pp:.2f}")
PY
