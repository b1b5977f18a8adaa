#!/usr/bin/env bash
# tardy's own cost against hyperfine's, in one run (WebPageTest's observer
# effect: the harness must not cost more than the peer's).
#
# For each command (`true`, `sleep 0.005`, gzip of 3 MB), runs
# `hyperfine -N --runs R --warmup 3 CMD` and `tardy run -N --runs R --warmup 3
# CMD` alternately, PAIRS times (the order flips every pair so drift hits
# both), and prints the median ratio tardy/hyperfine of
#   - the total wall time of the whole command (tardy's start-up and
#     calibration included), and
#   - the mean time per run each tool reports (the measurement itself).
# Needs: hyperfine (apt-get install hyperfine), python3, a release build.
#
#   bench/overhead.sh                 PAIRS=5 RUNS=300 by default (gzip: RUNS/10)
. "$(dirname "$0")/lib.sh"
PAIRS=${PAIRS:-5}
RUNS=${RUNS:-300}
command -v hyperfine >/dev/null || { echo "bench/overhead.sh: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 2; }
tmp=$WORK
head -c 3000000 /dev/urandom | base64 > "$tmp/data.txt"

now() { date +%s%N; }
bench() { # name runs command...
  local name=$1 runs=$2; shift 2
  rm -f "$tmp"/{h,t}.{wall,mean}
  for i in $(seq "$PAIRS"); do
    local order="h t"; (( i % 2 )) || order="t h"
    for tool in $order; do
      local t0 t1; t0=$(now)
      if [ $tool = h ]; then
        hyperfine -N --runs "$runs" --warmup 3 --style none --export-json "$tmp/h.json" "$*" >/dev/null 2>&1
        t1=$(now)
        python3 -c "import json;print(json.load(open('$tmp/h.json'))['results'][0]['mean'])" >> "$tmp/h.mean"
      else
        "$TARDY" run -N --runs "$runs" --warmup 3 --quiet --export-json "$tmp/t.json" "$*" >/dev/null 2>&1
        t1=$(now)
        python3 -c "import json;print(json.load(open('$tmp/t.json'))['benchmarks'][0]['summary']['mean'])" >> "$tmp/t.mean"
      fi
      echo $(( t1 - t0 )) >> "$tmp/$tool.wall"
    done
  done
  python3 - "$tmp" "$name" "$runs" "$PAIRS" <<'PY'
import statistics as st, sys, os
d, name, runs, pairs = sys.argv[1:5]
read = lambda f: [float(x) for x in open(os.path.join(d, f))]
hw, tw, hm, tm = read("h.wall"), read("t.wall"), read("h.mean"), read("t.mean")
print(f"{name}: {pairs} interleaved pairs of {runs} runs (-N, 3 warm-ups)")
print(f"  total wall    hyperfine {st.median(hw)/1e6:8.1f} ms   tardy {st.median(tw)/1e6:8.1f} ms   ratio {st.median(tw)/st.median(hw):.3f}")
print(f"  reported mean hyperfine {st.median(hm)*1e6:8.1f} us   tardy {st.median(tm)*1e6:8.1f} us   ratio {st.median(tm)/st.median(hm):.3f}")
PY
}
bench "true" "$RUNS" true
bench "sleep 0.005" "$RUNS" sleep 0.005
bench "gzip -6 (3 MB)" "$(( RUNS / 10 ))" gzip -6 -c "$tmp/data.txt"
