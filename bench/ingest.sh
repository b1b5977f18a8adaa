#!/usr/bin/env bash
# tardy's report ingestion against Python's junitparser and `xmllint --stream` on one
# 1,000,000-testcase JUnit file (~110 MB), in one run: median wall time of REPS alternating
# runs, the ratios, and peak memory. Targets (issues 4, 51): tardy under 1 s, >= 20x faster
# than junitparser, within 2x of xmllint --stream, at most 16 MiB.
# Needs: python3 with junitparser (pip install junitparser), xmllint (apt-get install
# libxml2-utils), /usr/bin/time, a release build.
. "$(dirname "$0")/lib.sh"
N=${N:-1000000}
REPS=${REPS:-3}
python3 -c "import junitparser" 2>/dev/null || { echo "bench/ingest.sh: pip install junitparser" >&2; exit 2; }
command -v xmllint > /dev/null || { echo "bench/ingest.sh: apt-get install libxml2-utils (xmllint)" >&2; exit 2; }
tmp=$WORK
python3 bench/gen-junit.py "$tmp/big.xml" "$N"
cat > "$tmp/jp.py" <<'PY'
import sys
from junitparser import JUnitXml
total, n = 0.0, 0
for suite in JUnitXml.fromfile(sys.argv[1]):
    for case in suite:
        n += 1
        total += case.time or 0.0
print(n, round(total, 3))
PY
ls -la "$tmp/big.xml" | awk '{printf "file: %.0f MB, %s testcases\n", $5/1e6, '"$N"'}'
now() { date +%s%N; }
for i in $(seq "$REPS"); do
  t0=$(now); "$TARDY" tests show "$tmp/big.xml" --format json > "$tmp/t.json"; t1=$(now)
  python3 "$tmp/jp.py" "$tmp/big.xml" > "$tmp/jp.txt"; t2=$(now)
  xmllint --stream --noout "$tmp/big.xml"; t3=$(now)
  echo "$(( t1 - t0 )) $(( t2 - t1 )) $(( t3 - t2 ))" >> "$tmp/times"
done
/usr/bin/time -f "%M" -o "$tmp/mem" "$TARDY" tests show "$tmp/big.xml" > /dev/null
/usr/bin/time -f "%M" -o "$tmp/xmem" xmllint --stream --noout "$tmp/big.xml"
python3 - "$tmp" <<'PY'
import json, statistics as st, sys
d = sys.argv[1]
rows = [list(map(int, l.split())) for l in open(f"{d}/times")]
t, j, x = (st.median(r[i] for r in rows) / 1e9 for i in range(3))
tardy = json.load(open(f"{d}/t.json"))
n, total = open(f"{d}/jp.txt").read().split()
print(f"tardy tests show   {t:.3f} s  ({tardy['tests']} tests, sum {tardy['total_s']:.3f} s)   target < 1 s: {'met' if t < 1 else 'NOT met'}")
print(f"junitparser        {j:.3f} s  ({n} tests, sum {total} s)")
print(f"ratio junitparser/tardy {j/t:.1f}x   target >= 20x: {'met' if j/t >= 20 else 'NOT met'}")
print(f"xmllint --stream   {x:.3f} s  (tardy/xmllint {t/x:.2f}x   target <= 2x: {'met' if t/x <= 2 else 'NOT met'})")
mem = int(open(f'{d}/mem').read()) / 1024
print(f"tardy peak memory {mem:.1f} MiB (target <= 16 MiB: {'met' if mem <= 16 else 'NOT met'}); xmllint {int(open(f'{d}/xmem').read()) / 1024:.1f} MiB")
PY
