#!/usr/bin/env bash
# `tardy compare` against benchstat on the same Go benchmark files, in one
# interleaved run: 5,000 and 50,000 benchmarks x 10 runs (ns/op, B/op,
# allocs/op; 10% of them 10% slower in the new file), from
# bench/gen-go-bench.py. Prints each tool's median wall time, the ratio
# tardy/benchstat (the target is at most 0.5), and tardy's time per
# benchmark at both sizes (linear: within 1.5x).
# Needs: benchstat (go install golang.org/x/perf/cmd/benchstat@latest), python3.
#
#   bench/compare.sh            ROUNDS=5 by default
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-5}
BENCHSTAT=${BENCHSTAT:-$(command -v benchstat || echo "$HOME/go/bin/benchstat")}
[ -x "$BENCHSTAT" ] || { echo "bench/compare.sh: benchstat is not installed (go install golang.org/x/perf/cmd/benchstat@latest)" >&2; exit 2; }
now() { date +%s%N; }
declare -A per
for n in 5000 50000; do
  python3 bench/gen-go-bench.py "$WORK/g$n" "$n" 10 "$((n / 10))" >/dev/null
  : > "$WORK/t" ; : > "$WORK/b"
  for i in $(seq "$ROUNDS"); do
    order="t b"; (( i % 2 )) || order="b t"
    for tool in $order; do
      s=$(now)
      if [ "$tool" = t ]; then
        "$TARDY" compare "$WORK/g$n/old.txt" "$WORK/g$n/new.txt" >/dev/null 2>&1
      else
        "$BENCHSTAT" "$WORK/g$n/old.txt" "$WORK/g$n/new.txt" >/dev/null 2>&1
      fi
      echo $(( $(now) - s )) >> "$WORK/$tool"
    done
  done
  python3 - "$WORK" "$n" "$ROUNDS" <<'PY'
import statistics as st, sys, os
d, n, rounds = sys.argv[1], int(sys.argv[2]), sys.argv[3]
t = st.median(float(x) for x in open(os.path.join(d, "t")))
b = st.median(float(x) for x in open(os.path.join(d, "b")))
print(f"{n} benchmarks x 10 runs, {rounds} interleaved rounds: tardy {t/1e9:.2f} s, benchstat {b/1e9:.2f} s, ratio {t/b:.2f}; tardy {t/1e3/n:.1f} us a benchmark")
PY
done

# benchstat's own bent testdata (golang.org/x/perf/benchfmt/testdata/bent, in
# the Go module cache once benchstat is installed): its one pair of timed
# runs (25 runs a benchmark, many tied values), and every Base file against
# every Tip file (.stdout, .benchsize and .benchdwarf concatenated).
BENT=$(ls -d "$(go env GOMODCACHE 2>/dev/null || echo "$HOME/go/pkg/mod")"/golang.org/x/perf@*/benchfmt/testdata/bent 2>/dev/null | tail -1)
if [ -n "$BENT" ] && [ -d "$BENT" ]; then
  cat "$BENT"/*Base*.stdout "$BENT"/*Base*.bench* > "$WORK/bent-base.txt"
  cat "$BENT"/*Tip*.stdout "$BENT"/*Tip*.bench* > "$WORK/bent-tip.txt"
  for case in "$BENT/20200101T213604.Base.stdout $BENT/20200101T213604.Tip.stdout" "$WORK/bent-base.txt $WORK/bent-tip.txt"; do
    : > "$WORK/t" ; : > "$WORK/b"
    for i in $(seq "$((ROUNDS * 2))"); do
      order="t b"; (( i % 2 )) || order="b t"
      for tool in $order; do
        s=$(now)
        # shellcheck disable=SC2086
        if [ "$tool" = t ]; then "$TARDY" compare $case >/dev/null 2>&1; else "$BENCHSTAT" $case >/dev/null 2>&1; fi
        echo $(( $(now) - s )) >> "$WORK/$tool"
      done
    done
    python3 - "$WORK" "$(basename "${case%% *}")" <<'PY'
import statistics as st, sys, os
d, name = sys.argv[1], sys.argv[2]
t = st.median(float(x) for x in open(os.path.join(d, "t")))
b = st.median(float(x) for x in open(os.path.join(d, "b")))
print(f"bent {name} and its Tip: tardy {t/1e6:.1f} ms, benchstat {b/1e6:.1f} ms, ratio {t/b:.2f}")
PY
  done
else
  echo "bench/compare.sh: benchstat's bent testdata is not in the Go module cache; skipped"
fi
