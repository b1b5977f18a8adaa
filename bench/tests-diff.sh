#!/usr/bin/env bash
# `tardy tests diff` of two JUnit files of 1,000,000 test cases each (~110 MB each; the
# after side 10% slower), against a junitparser script that reads both and matches tests
# by name, in one run: median wall time of REPS alternating runs, the ratio, and each
# one's peak memory. Target (issues 49, 51): tardy within 256 MiB.
# Needs: python3 with junitparser (pip install junitparser), /usr/bin/time, a release build.
. "$(dirname "$0")/lib.sh"
N=${N:-1000000}
REPS=${REPS:-3}
python3 -c "import junitparser" 2>/dev/null || { echo "bench/tests-diff.sh: pip install junitparser" >&2; exit 2; }
python3 bench/gen-junit.py "$WORK/before.xml" "$N" 1.0 1 &
python3 bench/gen-junit.py "$WORK/after.xml" "$N" 1.1 2 &
wait
cat > "$WORK/jp.py" <<'PY'
import sys
from junitparser import JUnitXml
def read(path):
    out = {}
    for suite in JUnitXml.fromfile(path):
        for case in suite:
            out[(suite.name, case.classname, case.name)] = case.time or 0.0
    return out
b, a = read(sys.argv[1]), read(sys.argv[2])
changes = sorted(((a[k] - b[k], k) for k in b.keys() & a.keys()), reverse=True)[:10]
print(len(b.keys() & a.keys()), round(sum(b.values()), 3), round(sum(a.values()), 3))
PY
now() { date +%s%N; }
for i in $(seq "$REPS"); do
  t0=$(now); "$TARDY" tests diff "$WORK/before.xml" --vs "$WORK/after.xml" > "$WORK/t.txt"; t1=$(now)
  python3 "$WORK/jp.py" "$WORK/before.xml" "$WORK/after.xml" > "$WORK/jp.txt"; t2=$(now)
  echo "$(( t1 - t0 )) $(( t2 - t1 ))" >> "$WORK/times"
done
/usr/bin/time -f "%M" -o "$WORK/mem" "$TARDY" tests diff "$WORK/before.xml" --vs "$WORK/after.xml" > /dev/null
/usr/bin/time -f "%M" -o "$WORK/jpmem" python3 "$WORK/jp.py" "$WORK/before.xml" "$WORK/after.xml" > /dev/null
python3 - "$WORK" <<'PY'
import statistics as st, sys
d = sys.argv[1]
rows = [list(map(int, l.split())) for l in open(f"{d}/times")]
t, j = (st.median(r[i] for r in rows) / 1e9 for i in range(2))
mem, jpmem = (int(open(f"{d}/{f}").read()) / 1024 for f in ("mem", "jpmem"))
print(f"tardy tests diff   {t:.3f} s  peak {mem:.0f} MiB   target <= 256 MiB: {'met' if mem <= 256 else 'NOT met'}")
print(f"junitparser diff   {j:.3f} s  peak {jpmem:.0f} MiB   ({open(f'{d}/jp.txt').read().split()[0]} matched)")
print(f"ratio junitparser/tardy {j/t:.1f}x")
PY
