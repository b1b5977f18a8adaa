#!/usr/bin/env bash
# tardy compare against ministat on two 1,000,000-value files, in one run.
# Prints the median wall time of each over REPS alternating runs and the ratio.
# Target (issue 3): tardy compare finishes in under 0.5 s.
# Needs: ministat (apt-get install ministat), python3, a release build.
. "$(dirname "$0")/lib.sh"
N=${N:-1000000}
REPS=${REPS:-5}
command -v ministat >/dev/null || { echo "bench/stats.sh: ministat is not installed (apt-get install ministat)" >&2; exit 2; }
tmp=$WORK
python3 - "$tmp" "$N" <<'PY'
import random, sys
d, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(1)
for name, mu in (("a", 10.0), ("b", 10.05)):
    with open(f"{d}/{name}.txt", "w") as f:
        f.write("".join(f"{rng.lognormvariate(0, 0.05) * mu:.6f}\n" for _ in range(n)))
PY
now() { date +%s%N; }
for i in $(seq "$REPS"); do
  t0=$(now); ministat -n "$tmp/a.txt" "$tmp/b.txt" > /dev/null; t1=$(now)
  "$TARDY" compare "$tmp/a.txt" "$tmp/b.txt" --no-plot > "$tmp/out.txt"; t2=$(now)
  "$TARDY" compare --ministat "$tmp/a.txt" "$tmp/b.txt" > /dev/null; t3=$(now)
  echo "$(( t1 - t0 )) $(( t2 - t1 )) $(( t3 - t2 ))" >> "$tmp/times"
done
python3 - "$tmp/times" "$N" <<'PY'
import statistics as st, sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1])]
m, t, tm = (st.median(r[i] for r in rows) / 1e9 for i in range(3))
print(f"two files of {int(sys.argv[2]):,} values, median of {len(rows)} alternating runs")
print(f"  ministat -n                 {m:.3f} s")
print(f"  tardy compare (auto test)   {t:.3f} s   ratio tardy/ministat {t/m:.2f}   target < 0.5 s: {'met' if t < 0.5 else 'NOT met'}")
print(f"  tardy compare --ministat    {tm:.3f} s   ratio tardy/ministat {tm/m:.2f}")
PY
tail -3 "$tmp/out.txt"
