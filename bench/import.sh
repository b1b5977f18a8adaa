#!/usr/bin/env bash
# `tardy history import` against SQLite's own `.import` of the same points
# (issue 51): one Otava CSV of 1,000,000 points (10,000 builds x 100
# metrics), imported by tardy (series, points, provenance; change points
# not searched: that is `history detect`, timed on its own line), and by
# sqlite3 one row per point into a table (series, time, commit, value) with
# an index on (series, time). Interleaved, ROUNDS rounds (default 3);
# prints the medians, the ratio and each one's peak memory.
# Needs: sqlite3, python3, /usr/bin/time, a release build.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "bench/import.sh: apt-get install sqlite3" >&2; exit 2; }
ROUNDS=${ROUNDS:-3}
BUILDS=${BUILDS:-10000}
METRICS=${METRICS:-100}
python3 - "$WORK/wide.csv" "$WORK/long.csv" "$BUILDS" "$METRICS" <<'PY'
import random, sys
wide, long_, builds, metrics = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(1)
with open(wide, "w") as w, open(long_, "w") as l:
    w.write("time,commit," + ",".join(f"m{j:03}" for j in range(metrics)) + "\n")
    for i in range(builds):
        t, c = 1_700_000_000 + i * 60, f"{i:08x}"
        vals = [f"{100 + j + rng.gauss(0, 1):.3f}" for j in range(metrics)]
        w.write(f"{t},{c}," + ",".join(vals) + "\n")
        for j, v in enumerate(vals):
            l.write(f"m{j:03},{t},{c},{v}\n")
PY
points=$((BUILDS * METRICS))
cat > "$WORK/import.sql" <<SQL
CREATE TABLE points(series TEXT, time INTEGER, "commit" TEXT, value REAL);
CREATE INDEX by_series_time ON points(series, time);
.mode csv
.import $WORK/long.csv points
SQL
now() { python3 -c 'import time; print(time.time())'; }
: > "$WORK/t.txt"
for r in $(seq "$ROUNDS"); do
  for who in tardy sqlite; do
    rm -f "$WORK/h.db" "$WORK/h.db-wal" "$WORK/h.db-shm" "$WORK/s.db"
    t0=$(now)
    if [ "$who" = tardy ]; then
      /usr/bin/time -f "%M" -o "$WORK/mem" "$TARDY" history import --db "$WORK/h.db" "$WORK/wide.csv" >/dev/null
    else
      /usr/bin/time -f "%M" -o "$WORK/mem" sqlite3 "$WORK/s.db" < "$WORK/import.sql"
    fi
    t1=$(now)
    echo "$who $(python3 -c "print($t1 - $t0)") $(tail -1 "$WORK/mem")" >> "$WORK/t.txt"
  done
done
t0=$(now)
"$TARDY" history detect --db "$WORK/h.db" >/dev/null || true
t1=$(now)
python3 - "$WORK/t.txt" "$points" "$(python3 -c "print($t1 - $t0)")" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(who, i): return statistics.median(float(r[i]) for r in rows if r[0] == who)
t, s = med("tardy", 1), med("sqlite", 1)
print(f"{int(sys.argv[2]):,} points, median of {len(rows) // 2} interleaved rounds")
print(f"tardy history import  {t:.2f} s  {med('tardy', 2) / 1024:.0f} MiB")
print(f"sqlite3 .import       {s:.2f} s  {med('sqlite', 2) / 1024:.0f} MiB")
print(f"ratio tardy/sqlite3   {t / s:.2f}   (target <= 1.0; memory target 64 MiB)")
print(f"history detect afterwards (not part of the import): {float(sys.argv[3]):.2f} s")
PY
