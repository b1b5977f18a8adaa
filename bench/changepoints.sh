#!/usr/bin/env bash
# Change points: tardy vs Apache Otava on the same 100 series x 2,000 points.
#
#   pip install apache-otava==0.8.0 && bench/changepoints.sh
#
# Writes one Otava CSV (time, commit, m0..m99: steps of -20%..+25% at random
# points, 1-5% noise), runs `otava analyze` (JSON) and `tardy history analyze`
# (JSON) on it, checks that both report the same (metric, index) change
# points, and prints the median of 3 wall times of each and the ratio.
. "$(dirname "$0")/lib.sh"
SERIES=${SERIES:-100} POINTS=${POINTS:-2000}
python3 - "$WORK" "$SERIES" "$POINTS" <<'PY'
import random, sys, datetime
work, m, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(5)
cols = []
for k in range(m):
    lvl = 100.0
    steps = set(rng.sample(range(50, n - 50), rng.randint(0, 4)))
    noise = rng.choice([0.01, 0.03, 0.05])
    col = []
    for i in range(n):
        if i in steps:
            lvl *= rng.choice([0.8, 0.9, 1.1, 1.25])
        col.append(f"{lvl * (1 + rng.gauss(0, noise)):.6g}")
    cols.append(col)
# Recent times: otava analyze only reads the last 365 days by default.
start = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=100)
with open(f"{work}/series.csv", "w") as f:
    f.write("time,commit," + ",".join(f"m{k}" for k in range(m)) + "\n")
    for i in range(n):
        t = (start + datetime.timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        f.write(f"{t},c{i:05x}," + ",".join(c[i] for c in cols) + "\n")
with open(f"{work}/otava.yaml", "w") as f:
    f.write(f"tests:\n  bench:\n    type: csv\n    file: {work}/series.csv\n    time_column: time\n"
            "    attributes: [commit]\n    metrics: [" + ", ".join(f"m{k}" for k in range(m)) + "]\n")
PY
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
t_otava=() t_tardy=()
for i in 1 2 3; do
  s=$(date +%s.%N)
  OTAVA_CONFIG=$WORK/otava.yaml otava analyze bench --output json >"$WORK/otava.json" 2>/dev/null
  t_otava+=("$(echo "$(date +%s.%N) - $s" | bc)")
  s=$(date +%s.%N)
  "$TARDY" history analyze "$WORK/series.csv" --json >"$WORK/tardy.json"
  t_tardy+=("$(echo "$(date +%s.%N) - $s" | bc)")
done
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
t = sorted((c["metric"], c["index"]) for c in json.load(open(f"{w}/tardy.json")))
o = sorted((c["metric"], c["index"]) for g in json.load(open(f"{w}/otava.json"))["bench"] for c in g["changes"])
print(f"change points: tardy {len(t)}, otava {len(o)}, identical: {t == o}")
if t != o:
    print("differ:", sorted(set(t) ^ set(o))[:20]); sys.exit(1)
PY
mo=$(printf '%s\n' "${t_otava[@]}" | median)
mt=$(printf '%s\n' "${t_tardy[@]}" | median)
peak=$( { /usr/bin/time -f %M "$TARDY" history analyze "$WORK/series.csv" --json >/dev/null; } 2>&1 )
echo "otava analyze:         ${mo} s (median of 3)"
echo "tardy history analyze: ${mt} s (median of 3), peak ${peak} KiB"
echo "ratio: tardy is $(echo "scale=1; $mo / $mt" | bc)x faster ($SERIES series x $POINTS points)"
