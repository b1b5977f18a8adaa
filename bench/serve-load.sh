#!/usr/bin/env bash
# Load and fault test of `tardy serve`: 32 concurrent uploaders, the server
# killed (SIGKILL) and restarted in the middle, then every acknowledged
# upload must be stored exactly once. Prints uploads per second on SQLite,
# and on PostgreSQL when TARDY_TEST_POSTGRES names a server (an admin URL).
#
#   bench/serve-load.sh                      # 32 x 50 uploads per backend
#   UPLOADERS=32 UPLOADS=10 HISTORY_TESTS=2000 HISTORY_POINTS=30 bench/serve-load.sh   # what CI runs
#
# Then the upload latency of a HISTORY_TESTS-test suite (20,000) against the
# length of the history, up to HISTORY_POINTS points (100; 1,000 for the
# the figures of docs/book/04-ci-and-server.md; 0 skips it), with bench/serve-history.py.
#
# NO_DETECT=1 measures uploads without the change-point detection that
# follows each one.
#
# Each upload is a points JSON with its own run id; uploaders retry refused
# or broken connections (as `tardy push` does), so an upload in flight when
# the server dies is sent again, and must not be stored twice.
. "$(dirname "$0")/lib.sh"
BENCH=$(pwd)/bench
UPLOADERS=${UPLOADERS:-32} UPLOADS=${UPLOADS:-50}
cd "$WORK"
"$TARDY" token add --token-file tokens --label load >token 2>/dev/null

run_backend() {
  local name=$1 db=$2
  python3 - "$TARDY" "$db" "$(cat token)" "$UPLOADERS" "$UPLOADS" "$name" <<'PY'
import http.client, json, os, signal, socket, subprocess, sys, threading, time
tardy, db, token, uploaders, uploads, name = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()

def start():
    extra = ["--no-detect"] if os.environ.get("NO_DETECT") else []
    p = subprocess.Popen([tardy, "serve", "--db", db, "--listen", f"127.0.0.1:{port}",
                          "--token-file", "tokens"] + extra,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    assert "listening" in line, line
    return p

server = start()
acked, lock = [], threading.Lock()
retries = [0]

def upload(k, i):
    run = f"u{k}-{i}"
    body = json.dumps({"series": [{"name": f"u{k}", "unit": "s", "points": [
        {"value": 1.0 + (i % 7) * 0.01, "commit": run, "time": 1700000000 + i}]}]})
    delay = 0.05
    for attempt in range(60):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("POST", "/api/v1/points?series=load", body,
                      {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                       "X-Tardy-Run-Id": run})
            r = c.getresponse(); r.read(); c.close()
            if r.status in (200, 201):
                with lock: acked.append(run)
                return
            if r.status < 500 and r.status not in (408, 429):
                raise SystemExit(f"refused: HTTP {r.status}")
        except (ConnectionError, socket.timeout, http.client.HTTPException, OSError):
            pass
        with lock: retries[0] += 1
        time.sleep(delay); delay = min(delay * 2, 1.0)
    raise SystemExit(f"upload {run} never acknowledged")

def worker(k):
    for i in range(uploads):
        upload(k, i)

t0 = time.time()
threads = [threading.Thread(target=worker, args=(k,)) for k in range(uploaders)]
for t in threads: t.start()
total = uploaders * uploads
while True:
    with lock: n = len(acked)
    if n >= total // 2: break
    time.sleep(0.01)
server.send_signal(signal.SIGKILL); server.wait()
killed_at = len(acked)
server = start()
for t in threads: t.join()
elapsed = time.time() - t0

# Every acknowledged upload exactly once: one point per run id.
def get(path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("GET", path); r = c.getresponse(); b = r.read(); c.close()
    assert r.status == 200, (path, r.status, b[:200])
    return json.loads(b)
seen = {}
for k in range(uploaders):
    for p in get(f"/api/v1/points?series=load%2Fu{k}")["points"]:
        seen[p["commit"]] = seen.get(p["commit"], 0) + 1
dups = {r: c for r, c in seen.items() if c != 1}
missing = [r for r in acked if r not in seen]
server.send_signal(signal.SIGTERM); server.wait()
print(f"{name}: {len(acked)} uploads acknowledged ({killed_at} before the kill), {len(seen)} stored, "
      f"{len(dups)} duplicated, {len(missing)} missing, {retries[0]} retries; "
      f"{len(acked) / elapsed:.0f} uploads/s over {elapsed:.1f} s with {uploaders} uploaders")
if dups or missing or len(acked) != total:
    sys.exit(f"{name}: FAILED exactly-once")
PY
}

run_backend sqlite "sqlite:$WORK/load.db"
if [ -n "${TARDY_TEST_POSTGRES:-}" ]; then
  DBNAME=tardy_load_$$
  psql -q "$TARDY_TEST_POSTGRES" -c "CREATE DATABASE $DBNAME" >/dev/null
  trap 'psql -q "$TARDY_TEST_POSTGRES" -c "DROP DATABASE IF EXISTS $DBNAME WITH (FORCE)" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
  run_backend postgres "${TARDY_TEST_POSTGRES%/*}/$DBNAME"
else
  echo "postgres: skipped (TARDY_TEST_POSTGRES is not set)"
fi

# Upload latency against the length of the stored history (bench/serve-history.py):
# HISTORY_POINTS uploads of a HISTORY_TESTS-test suite, with and without detection
# (0 points: skipped).
if [ "${HISTORY_POINTS:-100}" -gt 0 ]; then
  TARDY="$TARDY" TESTS="${HISTORY_TESTS:-20000}" POINTS="${HISTORY_POINTS:-100}" \
    python3 "$BENCH/serve-history.py"
fi
