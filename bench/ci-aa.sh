#!/usr/bin/env bash
# tardy ci's false alarms on A/A pairs: a branch that changes nothing the
# benchmark runs, measured against its merge base N times while two CPU hogs
# compete (a shared CI runner). Prints how often the verdict said "slower"
# (the test's own rate: at most 2.5% at 95% two-sided) and how often a 2% gate
# failed, with the binomial 95% upper bound of each. With PLANTED=5 the
# branch does 5% more work instead, and the same lines say how often it was
# found (the power).
#
# METRIC=instructions measures counts instead of wall time.
#
# RUNS=auto leaves the runs to tardy ci's own budget (precision target, --max-time).
#
# Usage: [PLANTED=PCT] [METRIC=instructions] bench/ci-aa.sh [PAIRS] [RUNS|auto]   (default 30 pairs, 10 runs a side)
. "$(dirname "$0")/lib.sh"
pairs=${1:-30}
runs=${2:-10}
runs_arg="--runs $runs"
[ "$runs" = auto ] && runs_arg=""
cd "$WORK"
git init -q -b main repo && cd repo
git config user.email b@example.com && git config user.name bench
head -c 2000000 /dev/urandom | base64 >data.txt
printf 'gzip -6 -c data.txt >/dev/null\nsleep 0.01\n' >bench.sh
git add -A && git commit -qm benchmark
if [ -n "${PLANTED:-}" ]; then
  # PCT% more data to compress: PCT% more work.
  git checkout -qb planted && head -c $((2000000 * PLANTED / 100)) /dev/urandom | base64 >more.txt
  printf 'cat data.txt more.txt | gzip -6 >/dev/null\nsleep 0.01\n' >bench.sh
  git add -A && git commit -qm "planted: ${PLANTED}% more work"
else
  git checkout -qb aa && echo "docs only" >NOTES && git add NOTES && git commit -qm "A/A: nothing the benchmark runs"
fi
(while :; do :; done) & h1=$!
(while :; do :; done) & h2=$!
trap 'kill $h1 $h2 2>/dev/null; rm -rf "$WORK"' EXIT
slower=0 gated=0
for i in $(seq "$pairs"); do
  out=$("$TARDY" ci -q --base main $runs_arg --fail-if-slower 2 ${METRIC:+--metric "$METRIC"} --json --keep-worktrees -- sh bench.sh 2>/dev/null) || true
  v=$(printf '%s' "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["estimate"]["verdict"], j["regression"], round(j["estimate"]["ratio"],4), j["estimate"]["n_baseline"], "runs")')
  echo "pair $i: $v"
  case "$v" in slower*) slower=$((slower + 1));; esac
  case "$v" in *True*) gated=$((gated + 1));; esac
done
python3 - "$pairs" "$slower" "$gated" <<'PY'
import sys
from math import comb
n, s, g = map(int, sys.argv[1:])
def upper(k, n, conf=0.95):
    # Clopper-Pearson upper bound.
    lo, hi = k / n, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        tail = sum(comb(n, j) * mid**j * (1 - mid)**(n - j) for j in range(k + 1))
        lo, hi = (mid, hi) if tail > 1 - conf else (lo, mid)
    return hi
print(("planted " + __import__("os").environ["PLANTED"] + "%" if __import__("os").environ.get("PLANTED") else "A/A") + f" under two CPU hogs, {n} pairs: verdict 'slower' {s}/{n} (95% upper bound {upper(s, n):.1%}; A/A: stated at most 2.5%), 2% gate failed {g}/{n} (upper bound {upper(g, n):.1%})")
PY
