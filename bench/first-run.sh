#!/usr/bin/env bash
# A newcomer's first comparison with the defaults: how long `tardy run A B`
# takes against `hyperfine A B` on the same pairs, interleaved (hyperfine,
# tardy, hyperfine, tardy...), with the wall time of each and the ratio of
# medians. tardy's default budget is 6 s of measuring per command, about twice
# hyperfine's 3 s, so the ratio should stay near 2 on a quiet or a busy machine.
#
# Usage: bench/first-run.sh [ROUNDS]   (needs hyperfine: apt-get install hyperfine)
. "$(dirname "$0")/lib.sh"
rounds=${1:-3}
cd "$WORK"
head -c 3000000 /dev/urandom | base64 >data.txt
pairs=("gzip -6 -c data.txt|gzip -7 -c data.txt" "sleep 0.01|sleep 0.012" "true|echo hi")
printf '%-40s %12s %12s %7s\n' pair "hyperfine s" "tardy s" ratio
for pair in "${pairs[@]}"; do
  a=${pair%|*} b=${pair#*|}
  hs=() ts=()
  for _ in $(seq "$rounds"); do
    t0=$(date +%s.%N); hyperfine -N --style none "$a" "$b" >/dev/null 2>&1; t1=$(date +%s.%N)
    "$TARDY" run --style none "$a" "$b" >/dev/null 2>&1; t2=$(date +%s.%N)
    hs+=("$(echo "$t1 - $t0" | bc)") ts+=("$(echo "$t2 - $t1" | bc)")
  done
  python3 - "$a vs $b" "${hs[*]}" "${ts[*]}" <<'PY'
import statistics, sys
h = statistics.median(map(float, sys.argv[2].split()))
t = statistics.median(map(float, sys.argv[3].split()))
print(f"{sys.argv[1][:40]:<40} {h:12.2f} {t:12.2f} {t / h:7.2f}")
PY
done
