#!/usr/bin/env bash
# Hostile and careless input, measured: the limits the book's "Reliability" section (docs/book/04-ci-and-server.md)
# states, with the figures of this run.
#
#   1. Server memory: 4 and 16 concurrent 31 MB CSV uploads (1.36 M points each);
#      peak RSS of `tardy serve` (VmHWM), SQLite, and PostgreSQL when
#      TARDY_TEST_POSTGRES names a database URL.
#   2. Nesting: `tardy tests show` on 100k nested <testsuite> elements (refused at
#      depth 256), and the same body uploaded to the server.
#   3. CLI memory: `tardy compare` on 1 GB of junk text and 1 GB of binary data
#      (refused from the first 64 KiB), and on a valid hyperfine JSON of 2 M times.
#   4. Slowloris: 520 connections trickling headers from this address while a
#      health probe runs every half second; the share of probes answered.
#   5-13. Compressed bombs, slow bodies on every route, push against a refusing
#      or absent server, a 200,000-column CSV, SIGTERM mid-upload, 10,000
#      sign-ins, the overview of 10,000 series, a slow 30 MB body beside a small
#      upload and 32 ranges of slow bodies: bench/hostile-server.py, which says
#      what each measures.
#
# Usage: bench/hostile.sh  (needs curl and python3)
. "$(dirname "$0")/lib.sh"
REPO=$PWD
cd "$WORK"

rss() { /usr/bin/time -f '%e s, %M KiB' "$@" 2>&1 >/dev/null | tail -1; }

echo "== 1. server memory under concurrent 31 MB uploads"
python3 - <<'EOF'
import random
random.seed(1)
with open('big.csv', 'w') as f:
    f.write('time,latency\n')
    for i in range(1_360_000):
        f.write(f'{1600000000+i},{random.gauss(100, 5):.6f}\n')
EOF
echo "body: $(du -m big.csv | cut -f1) MB, 1.36 M points"
"$TARDY" token add --token-file tokens --scope write >token.out 2>&1
STAMP=$(date +%s)
TOKEN=$(grep -o 'tardy_[0-9a-f]*' token.out | head -1)
serve_and_upload() { # backend label uploads
  local db=$1 label=$2 n=$3 port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$TARDY" serve --db "$db" --token-file tokens --listen "127.0.0.1:$port" --no-detect >serve.log 2>&1 &
  local pid=$!
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  local start=$SECONDS
  for i in $(seq "$n"); do
    curl -s -o "up$i.json" -w '%{http_code}\n' --max-time 900 -H "Authorization: Bearer $TOKEN" \
      -H 'Content-Type: text/csv' --data-binary @big.csv \
      "http://127.0.0.1:$port/api/v1/points?series=big$n-$i-$STAMP" >"code$i" &
  done
  wait $(jobs -p | grep -v "^$pid\$") 2>/dev/null || true
  local took=$((SECONDS - start))
  local hwm
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  local ok
  ok=$(cat code* | grep -c '^201$' || true)
  echo "$label, $n concurrent uploads: peak RSS $((hwm / 1024)) MiB, $ok/$n stored (201) in ${took} s, $((n * 1360000 / (took > 0 ? took : 1))) points/s"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -f code* up*.json
}
serve_and_upload sqlite:h4.db "SQLite" 4
serve_and_upload sqlite:h16.db "SQLite" 16
if [ -n "${TARDY_TEST_POSTGRES:-}" ]; then
  serve_and_upload "$TARDY_TEST_POSTGRES" "PostgreSQL" 4
  serve_and_upload "$TARDY_TEST_POSTGRES" "PostgreSQL" 16
else
  echo "PostgreSQL: skipped (TARDY_TEST_POSTGRES is not set)"
fi

echo "== 2. nesting"
python3 -c "print('<testsuite name=\"s\">' * 100000 + '</testsuite>' * 100000)" >deep.xml
echo "tests show, 100k nested suites: $(rss "$TARDY" tests show deep.xml) ($(du -k deep.xml | cut -f1) KiB file)"

echo "== 3. CLI memory on large files"
python3 - <<'EOF'
import os, random, json
random.seed(2)
with open('junk.txt', 'w') as f:
    line = ''.join(random.choice('abcdefghij ') for _ in range(199)) + '\n'
    for _ in range(5_000_000):
        f.write(line)
with open('junk.bin', 'wb') as f:
    for _ in range(1000):
        f.write(os.urandom(1 << 20))
times = [round(random.gauss(1.0, 0.05), 6) for _ in range(2_000_000)]
json.dump({"results": [{"command": "a", "mean": 1.0, "times": times}]}, open('big.json', 'w'))
# A valid 1.1 GB hyperfine file, one line: 110 M times (a chunk of 100k repeated).
chunk = ", ".join(f"{random.gauss(1.0, 0.05):.6f}" for _ in range(100_000))
with open('huge.json', 'w') as f:
    f.write('{"results": [{"command": "a", "mean": 1.0, "times": [' + chunk)
    for _ in range(1099):
        f.write(", " + chunk)
    f.write(']}]}')
EOF
printf '1.0\n1.1\n0.9\n1.05\n0.95\n' >small.txt
echo "compare, 1 GB junk text: $(rss "$TARDY" compare junk.txt small.txt)"
echo "compare, 1 GB binary:    $(rss "$TARDY" compare junk.bin small.txt)"
echo "compare, $(du -m big.json | cut -f1) MB hyperfine JSON (2 M times): $(rss "$TARDY" compare big.json big.json)"
mb=$(du -m huge.json | cut -f1)
echo "compare, $mb MB hyperfine JSON (110 M times) vs 5 values: $(rss "$TARDY" compare huge.json small.txt)"
echo "report,  $mb MB hyperfine JSON: $(rss "$TARDY" report --no-history huge.json -o huge.html) ($(du -k huge.html | cut -f1) KiB written)"
echo "history import, $mb MB hyperfine JSON: $(rss "$TARDY" history import --db huge.db huge.json)"
rm -f huge.json huge.html huge.db*

echo "== 4. slowloris"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$TARDY" serve --db sqlite:s.db --listen "127.0.0.1:$port" >serve.log 2>&1 &
spid=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
python3 - "$port" <<'EOF'
import socket, sys, threading, time, urllib.request
port = int(sys.argv[1])
stop = False
def attacker():
    held = []
    while not stop:
        while len(held) < 520:
            try:
                s = socket.create_connection(('127.0.0.1', port), timeout=1)
                s.sendall(b'GET / HTTP/1.1\r\nHost: x\r\n')
                held.append(s)
            except OSError:
                break
        alive = []
        for s in held:
            try:
                s.sendall(b'X-a: b\r\n')
                alive.append(s)
            except OSError:
                pass
        held = alive
        time.sleep(0.5)
t = threading.Thread(target=attacker, daemon=True)
t.start()
time.sleep(2)
ok = 0
for _ in range(76):
    try:
        ok += urllib.request.urlopen(f'http://127.0.0.1:{port}/healthz', timeout=2).status == 200
    except Exception:
        pass
    time.sleep(0.5)
stop = True
print(f"slowloris, 520 trickling connections: {ok}/76 health probes answered ({100*ok/76:.0f}%)")
EOF
kill "$spid"; wait "$spid" 2>/dev/null || true

echo "== 4b. history import of a 1 M-testcase JUnit report (the CLI readers stay under 256 MiB)"
python3 - <<'EOF'
with open('million.xml', 'w') as f:
    f.write('<?xml version="1.0"?>\n<testsuites>\n<testsuite name="s" tests="1000000">\n')
    for i in range(1000000):
        f.write(f'<testcase classname="pkg.Class{i%1000}" name="test_{i}" time="0.{i%997:03d}"/>\n')
    f.write('</testsuite>\n</testsuites>\n')
EOF
rm -f million.db
echo "first import:  $(rss "$TARDY" history import --db million.db --series big million.xml)"
echo "second import: $(rss "$TARDY" history import --db million.db --series big million.xml)"
echo "tests show:    $(rss "$TARDY" tests show million.xml)"

echo "== 5-13. compressed bombs, slow bodies, push, wide CSV, SIGTERM, sign-ins, overview, slow large body, ranges"
"$TARDY" token add --token-file tokens2 --scope write >w.out 2>&1
"$TARDY" token add --token-file tokens2 --scope read >r.out 2>&1
TARDY="$TARDY" TOKENS=tokens2 WRITE=$(grep -o 'tardy_[0-9a-f]*' w.out | head -1) \
  READ=$(grep -o 'tardy_[0-9a-f]*' r.out | head -1) python3 "$REPO/bench/hostile-server.py"
