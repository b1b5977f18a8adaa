#!/usr/bin/env bash
# tardy bisect against `git bisect run` with a fixed 30-runs-per-step t-test script, on real
# 64-commit repositories whose commit K makes a C busy loop EFFECT% slower (K random per
# seed), with this machine's natural noise. Prints, per effect, how often each named the
# right commit and the command runs each used, and the ratio of runs.
# Target (issue 6): >= 95% correct with <= half the runs.
# Needs: cc, git, python3 with scipy, a release build (made here). SEEDS (default 3).
. "$(dirname "$0")/lib.sh"
SEEDS=${SEEDS:-3}
python3 -c "import scipy" 2>/dev/null || { echo "bench/bisect.sh: pip install scipy" >&2; exit 2; }
tmp=$WORK
cat > "$tmp/loop.c" <<'C'
#include <stdio.h>
int main(void) {
  FILE *f = fopen("iters.txt", "r"); long n = 0;
  if (!f || fscanf(f, "%ld", &n) != 1) return 3;
  volatile unsigned long x = 0;
  for (long i = 0; i < n; i++) x += i;
  return 0;
}
C
# The fixed method's test script: 30 runs of HEAD against 30 runs of the good end
# (measured once, in base.txt); bad when Welch's t says slower at one-sided p < 0.05.
cat > "$tmp/ttest.sh" <<'SH'
#!/usr/bin/env bash
cc -O1 loop.c -o loop 2>/dev/null || exit 125
python3 - "$BASE" <<'PY'
import subprocess, sys, time
from scipy import stats
base = [float(x) for x in open(sys.argv[1]).read().split()]
runs = []
for _ in range(30):
    t = time.perf_counter(); subprocess.run(["./loop"], check=True); runs.append(time.perf_counter() - t)
open(sys.argv[1] + ".runs", "a").write("30\n")
t, p = stats.ttest_ind(runs, base, equal_var=False)
sys.exit(1 if t > 0 and p / 2 < 0.05 else 0)
PY
SH
chmod +x "$tmp/ttest.sh"
for effect in 3 5; do
  for seed in $(seq "$SEEDS"); do
    k=$(python3 -c "import random; random.seed($seed * 7 + $effect); print(random.randint(1, 64))")
    r="$tmp/repo-$effect-$seed"; mkdir -p "$r"; cd "$r"
    git init -q && git config user.email b@example.com && git config user.name Bench
    cp "$tmp/loop.c" . && echo 30000000 > iters.txt && git add . && git commit -qm "c0"
    for i in $(seq 1 64); do
      [ "$i" -eq "$k" ] && python3 -c "print(int(30000000 * (1 + $effect / 100)))" > iters.txt
      echo "$i" > n.txt; git add . && git commit -qm "c$i"
    done
    want=$(git rev-parse HEAD~$((64 - k)))
    # tardy
    got=$("$TARDY" bisect --good HEAD~64 --bad HEAD --build 'cc -O1 loop.c -o loop' --format json -- ./loop 2>/dev/null \
      | python3 -c "import json,sys; d=json.load(sys.stdin); print((d.get('culprit') or {}).get('commit') or 'no-single-culprit', d['total_runs'])") || got="error 0"
    "$TARDY" bisect reset > /dev/null 2>&1 || true
    # git bisect run + t-test: the good end's 30 runs first.
    git worktree add -q --detach "$r-base" HEAD~64 && (cd "$r-base" && cc -O1 loop.c -o loop && python3 -c "
import subprocess, time
print(' '.join(str((lambda t: (subprocess.run(['./loop']), time.perf_counter() - t)[1])(time.perf_counter())) for _ in range(30)))" > "$tmp/base-$effect-$seed.txt")
    git worktree remove --force "$r-base"
    export BASE="$tmp/base-$effect-$seed.txt"
    git bisect start HEAD HEAD~64 >/dev/null 2>&1 && git bisect run "$tmp/ttest.sh" > "$tmp/gb.log" 2>&1 || true
    gb=$(grep -m1 -o "^[0-9a-f]\{40\} is the first bad commit" "$tmp/gb.log" | cut -d' ' -f1 || true)
    git bisect reset -q >/dev/null 2>&1 || true
    gbruns=$(( 30 + 30 * $(wc -l < "$BASE.runs" 2>/dev/null || echo 0) ))
    echo "$effect $seed ${got%% *} ${got##* } $gb $gbruns $want" >> "$tmp/results"
    cd - > /dev/null
  done
done
python3 - "$tmp/results" <<'PY'
import sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    e, s, t, tr, g, gr, want = (line.split() + [""] * 7)[:7]
    if want == "":  # git bisect found nothing: shift columns
        e, s, t, tr, gr, want = line.split()[:6]; g = ""
    rows[e].append((t == want, int(tr), g == want, int(gr)))
for e, r in sorted(rows.items()):
    n = len(r)
    tc = sum(x[0] for x in r); gc = sum(x[2] for x in r)
    tr = sum(x[1] for x in r) / n; gr = sum(x[3] for x in r) / n
    print(f"{e}% slowdown, {n} repos: tardy {tc}/{n} right, {tr:.0f} runs;  git bisect run + t-test {gc}/{n} right, {gr:.0f} runs;  runs ratio {tr/gr:.2f}")
PY
