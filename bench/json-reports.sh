#!/usr/bin/env bash
# Test reports in the JSON formats, in one run per format: `tardy tests show` and
# `tardy tests diff` of N tests (1,000,000 by default) against the peer a user of that
# format would otherwise run, each one's median wall time of REPS alternating runs, the
# ratio, and each one's peak memory. Targets (issues 49, 51): every tardy reader within
# 256 MiB on two 1 M-test files, `tests show` within 16 MiB (streamed); go test -json
# read faster than gotestsum and tparse.
#   go test -json   gotestsum tool slowest --jsonfile, tparse -file
#   jest --json     a Python script: json.load, the sum and the 10 slowest
#   mocha json      the same script
#   cucumber json   the same script (scenarios of four steps and a hook)
#   playwright json the same script
# FORMATS picks some (all five by default: FORMATS="cucumber playwright").
# Needs: /usr/bin/time, python3, a release build; gotestsum and tparse for the go row
#   (go install gotest.tools/gotestsum@latest github.com/mfridman/tparse@latest).
. "$(dirname "$0")/lib.sh"
N=${N:-1000000}
REPS=${REPS:-3}
GOBIN=$(go env GOPATH 2>/dev/null || echo ~/go)/bin
FORMATS=${FORMATS:-go jest mocha cucumber playwright}
for k in $FORMATS; do
  python3 bench/gen-json-reports.py "$k" "$WORK/a.$k.json" "$N" 1.0 1 &
  python3 bench/gen-json-reports.py "$k" "$WORK/b.$k.json" "$N" 1.1 2 &
done
wait
cat > "$WORK/peer.py" <<'PY'
import json, sys
doc = json.load(open(sys.argv[2]))
if sys.argv[1] == "jest":
    times = [(t.get("duration") or 0) / 1e3 for f in doc["testResults"] for t in f["assertionResults"]]
elif sys.argv[1] == "cucumber":
    times = [sum((s.get("result") or {}).get("duration") or 0 for s in e.get("before", []) + e.get("steps", []) + e.get("after", [])) / 1e9
             for f in doc for e in f["elements"] if e.get("type") != "background"]
elif sys.argv[1] == "playwright":
    def walk(s):
        for spec in s.get("specs", []):
            for t in spec["tests"]:
                yield ((t["results"] or [{}])[-1].get("duration") or 0) / 1e3
        for inner in s.get("suites", []):
            yield from walk(inner)
    times = [x for s in doc["suites"] for x in walk(s)]
else:
    times = [(t.get("duration") or 0) / 1e3 for t in doc["tests"]]
print(len(times), round(sum(times), 3), sorted(times)[-10:])
PY
now() { date +%s%N; }
# Median seconds of REPS alternating runs of each command given (one per argument).
race() {
  : > "$WORK/times"
  for _ in $(seq "$REPS"); do
    line=""
    for cmd in "$@"; do
      t0=$(now); bash -c "$cmd" > /dev/null; t1=$(now)
      line="$line $(( t1 - t0 ))"
    done
    echo "$line" >> "$WORK/times"
  done
  python3 -c '
import statistics as st, sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1])]
print(" ".join(f"{st.median(r[i] for r in rows) / 1e9:.3f}" for i in range(len(rows[0]))))' "$WORK/times"
}
mib() { /usr/bin/time -f "%M" -o "$WORK/mem" bash -c "$1" > /dev/null; echo "$(( $(cat "$WORK/mem") / 1024 ))"; }
ls -la "$WORK"/a.*.json | awk '{printf "%s: %.0f MB\n", $9, $5/1e6}' | sed "s|$WORK/||"
printf '%-8s %-22s %9s %9s %9s\n' format job seconds "peak MiB" "ratio"
for k in $FORMATS; do
  a="$WORK/a.$k.json"; b="$WORK/b.$k.json"
  show="'$TARDY' --max-results 2000000 tests show '$a'"
  diff="'$TARDY' --max-results 2000000 tests diff '$a' --vs '$b'"
  if [ "$k" = go ]; then
    if [ -x "$GOBIN/gotestsum" ] && [ -x "$GOBIN/tparse" ]; then
      read -r ts tg tp <<< "$(race "$show" "'$GOBIN/gotestsum' tool slowest --jsonfile '$a' --threshold 0s" "'$GOBIN/tparse' -file '$a'")"
      printf '%-8s %-22s %9s %9s %9s\n' go "tardy tests show" "$ts" "$(mib "$show")" ""
      printf '%-8s %-22s %9s %9s %9s\n' go "gotestsum slowest" "$tg" "$(mib "'$GOBIN/gotestsum' tool slowest --jsonfile '$a' --threshold 0s")" "$(python3 -c "print(f'{$tg/$ts:.1f}x')")"
      printf '%-8s %-22s %9s %9s %9s\n' go "tparse -file" "$tp" "$(mib "'$GOBIN/tparse' -file '$a'")" "$(python3 -c "print(f'{$tp/$ts:.1f}x')")"
    else
      echo "go: gotestsum or tparse not in $GOBIN: peers skipped"
      read -r ts <<< "$(race "$show")"
      printf '%-8s %-22s %9s %9s\n' go "tardy tests show" "$ts" "$(mib "$show")"
    fi
  else
    read -r ts tp <<< "$(race "$show" "python3 '$WORK/peer.py' $k '$a'")"
    printf '%-8s %-22s %9s %9s %9s\n' "$k" "tardy tests show" "$ts" "$(mib "$show")" ""
    printf '%-8s %-22s %9s %9s %9s\n' "$k" "python json.load" "$tp" "$(mib "python3 '$WORK/peer.py' $k '$a'")" "$(python3 -c "print(f'{$tp/$ts:.1f}x')")"
  fi
  read -r td <<< "$(race "$diff")"
  printf '%-8s %-22s %9s %9s\n' "$k" "tardy tests diff" "$td" "$(mib "$diff")"
done
echo "ratio: the peer's time over tardy's (above 1: tardy is faster)"
