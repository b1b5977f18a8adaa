#!/usr/bin/env bash
# Change points: tardy vs Apache Otava on the same 100 series x 2,000 points.
#
#   pip install apache-otava==0.8.0 && bench/changepoints.sh
#
# Writes one Otava CSV (time, commit, m0..m99: steps of -20%..+25% at random
# points, 1-5% noise), runs `otava analyze` (JSON), `tardy history analyze
# --otava` and `tardy history analyze` (the calibrated default) on it, checks
# that Otava and `--otava` report the same (metric, index) change points, and
# prints the median of 3 wall times of each and the ratios. Then the false
# alarms: 50 series x 1,000 points of pure 2% Gaussian noise, change points
# found by Otava, by --otava and by the default.
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
t_otava=() t_tardy=() t_default=()
for i in 1 2 3; do
  s=$(date +%s.%N)
  OTAVA_CONFIG=$WORK/otava.yaml otava analyze bench --output json >"$WORK/otava.json" 2>/dev/null
  t_otava+=("$(echo "$(date +%s.%N) - $s" | bc)")
  s=$(date +%s.%N)
  "$TARDY" history analyze "$WORK/series.csv" --otava --json >"$WORK/tardy.json"
  t_tardy+=("$(echo "$(date +%s.%N) - $s" | bc)")
  s=$(date +%s.%N)
  "$TARDY" history analyze "$WORK/series.csv" --json >"$WORK/default.json"
  t_default+=("$(echo "$(date +%s.%N) - $s" | bc)")
done
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
t = sorted((c["metric"], c["index"]) for c in json.load(open(f"{w}/tardy.json")))
o = sorted((c["metric"], c["index"]) for g in json.load(open(f"{w}/otava.json"))["bench"] for c in g["changes"])
d = json.load(open(f"{w}/default.json"))
print(f"change points: tardy --otava {len(t)}, otava {len(o)}, identical: {t == o}; tardy default {len(d)}")
if t != o:
    print("differ:", sorted(set(t) ^ set(o))[:20]); sys.exit(1)
PY
mo=$(printf '%s\n' "${t_otava[@]}" | median)
mt=$(printf '%s\n' "${t_tardy[@]}" | median)
md=$(printf '%s\n' "${t_default[@]}" | median)
peak=$( { /usr/bin/time -f %M "$TARDY" history analyze "$WORK/series.csv" --otava --json >/dev/null; } 2>&1 )
peakd=$( { /usr/bin/time -f %M "$TARDY" history analyze "$WORK/series.csv" --json >/dev/null; } 2>&1 )
echo "otava analyze:                 ${mo} s (median of 3)"
echo "tardy history analyze --otava: ${mt} s (median of 3), peak ${peak} KiB"
echo "tardy history analyze:         ${md} s (median of 3), peak ${peakd} KiB"
echo "ratio: tardy --otava is $(echo "scale=1; $mo / $mt" | bc)x faster, the default $(echo "scale=1; $mo / $md" | bc)x ($SERIES series x $POINTS points)"

# False alarms on pure noise.
python3 - "$WORK" <<'PY'
import random, sys, datetime
work = sys.argv[1]
rng = random.Random(9)
m, n = 50, 1000
start = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=100)
cols = [[f"{100 * (1 + rng.gauss(0, 0.02)):.6g}" for _ in range(n)] for _ in range(m)]
with open(f"{work}/noise.csv", "w") as f:
    f.write("time,commit," + ",".join(f"m{k}" for k in range(m)) + "\n")
    for i in range(n):
        t = (start + datetime.timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        f.write(f"{t},c{i:05x}," + ",".join(c[i] for c in cols) + "\n")
with open(f"{work}/otava-noise.yaml", "w") as f:
    f.write(f"tests:\n  noise:\n    type: csv\n    file: {work}/noise.csv\n    time_column: time\n"
            "    attributes: [commit]\n    metrics: [" + ", ".join(f"m{k}" for k in range(m)) + "]\n")
PY
OTAVA_CONFIG=$WORK/otava-noise.yaml otava analyze noise --output json >"$WORK/otava-noise.json" 2>/dev/null
"$TARDY" history analyze "$WORK/noise.csv" --otava --json >"$WORK/tardy-noise-otava.json"
"$TARDY" history analyze "$WORK/noise.csv" --json >"$WORK/tardy-noise.json"
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
o = [c["metric"] for g in json.load(open(f"{w}/otava-noise.json"))["noise"] for c in g["changes"]]
t = [c["metric"] for c in json.load(open(f"{w}/tardy-noise-otava.json"))]
d = [c["metric"] for c in json.load(open(f"{w}/tardy-noise.json"))]
for name, cps in [("otava analyze", o), ("tardy --otava", t), ("tardy (default)", d)]:
    print(f"pure noise, 50 series x 1,000 points: {name:<16} {len(cps):>4} change points in {len(set(cps)):>2} series")
PY
