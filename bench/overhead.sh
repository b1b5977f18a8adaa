#!/usr/bin/env bash
# tardy's own overhead against hyperfine's, in one run (issue: "observer effect").
#
# Runs `hyperfine -N --runs 300 --warmup 3 true` and `tardy run -N --runs 300
# --warmup 3 true` alternately, PAIRS times (the order flips every pair so
# drift hits both), and prints the median ratio tardy/hyperfine of
#   - the total wall time of the whole command, and
#   - the mean time per run each tool reports.
# Needs: hyperfine (apt-get install hyperfine), python3, a release build.
. "$(dirname "$0")/lib.sh"
PAIRS=${PAIRS:-7}
RUNS=${RUNS:-300}
command -v hyperfine >/dev/null || { echo "bench/overhead.sh: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 2; }
tmp=$WORK

now() { date +%s%N; }
run_hyperfine() {
  local t0 t1; t0=$(now)
  hyperfine -N --runs "$RUNS" --warmup 3 --style none --export-json "$tmp/h.json" true >/dev/null 2>&1
  t1=$(now); echo $(( t1 - t0 )) >> "$tmp/h.wall"
  python3 -c "import json;print(json.load(open('$tmp/h.json'))['results'][0]['mean'])" >> "$tmp/h.mean"
}
run_tardy() {
  local t0 t1; t0=$(now)
  "$TARDY" run -N --runs "$RUNS" --warmup 3 --quiet --export-json "$tmp/t.json" true >/dev/null 2>&1
  t1=$(now); echo $(( t1 - t0 )) >> "$tmp/t.wall"
  python3 -c "import json;print(json.load(open('$tmp/t.json'))['benchmarks'][0]['summary']['mean'])" >> "$tmp/t.mean"
}
for i in $(seq "$PAIRS"); do
  if (( i % 2 )); then run_hyperfine; run_tardy; else run_tardy; run_hyperfine; fi
done
python3 - "$tmp" "$RUNS" "$PAIRS" <<'PY'
import statistics as st, sys, os
d, runs, pairs = sys.argv[1], sys.argv[2], sys.argv[3]
read = lambda f: [float(x) for x in open(os.path.join(d, f))]
hw, tw, hm, tm = read("h.wall"), read("t.wall"), read("h.mean"), read("t.mean")
print(f"{pairs} interleaved pairs of {runs} runs of `true` (-N, 3 warm-ups)")
print(f"total wall   hyperfine {st.median(hw)/1e6:8.1f} ms   tardy {st.median(tw)/1e6:8.1f} ms   ratio tardy/hyperfine {st.median(tw)/st.median(hw):.3f}")
print(f"reported mean hyperfine {st.median(hm)*1e6:7.1f} us   tardy {st.median(tm)*1e6:7.1f} us   ratio tardy/hyperfine {st.median(tm)/st.median(hm):.3f}")
per_pair = sorted(t / h for t, h in zip(tw, hw))
print(f"per-pair total-wall ratios: {', '.join(f'{r:.3f}' for r in per_pair)}")
PY
