#!/usr/bin/env bash
# Max RSS of `tardy run` against /usr/bin/time (GNU time), on a ladder of
# programs from `true` (about 1 MiB) to a 1 GiB buffer (dd bs=1G), and gzip.
# Each program: /usr/bin/time -f %M once, `tardy run --runs 3` (median of the
# runs' max_rss_kib), their ratio; then the same through tardy without its
# trampoline (TARDY_NO_TRAMPOLINE=1), which is what tardy reported before.
#
# Usage: bench/maxrss.sh   (needs /usr/bin/time: apt-get install time)
. "$(dirname "$0")/lib.sh"
cd "$WORK"
head -c 20000000 /dev/urandom | base64 >data.txt
printf '%-44s %12s %12s %7s %14s\n' program "time (KiB)" "tardy (KiB)" ratio "no trampoline"
for prog in "true" "gzip -6 -c data.txt" \
  "dd if=/dev/zero of=/dev/null bs=1M count=1" "dd if=/dev/zero of=/dev/null bs=16M count=1" \
  "dd if=/dev/zero of=/dev/null bs=128M count=1" "dd if=/dev/zero of=/dev/null bs=1G count=1"; do
  # shellcheck disable=SC2086 # the program's words
  ref=$(/usr/bin/time -f %M $prog 2>&1 >/dev/null | tail -1)
  ours=$("$TARDY" run --json --runs 3 --warmup 0 "$prog" | python3 -c 'import json,sys; print(json.load(sys.stdin)["benchmarks"][0]["resources"]["max_rss_median_kib"])')
  old=$(TARDY_NO_TRAMPOLINE=1 "$TARDY" run --json --runs 3 --warmup 0 "$prog" | python3 -c 'import json,sys; print(json.load(sys.stdin)["benchmarks"][0]["resources"]["max_rss_median_kib"])')
  printf '%-44s %12s %12s %7s %14s\n' "$prog" "$ref" "$ours" "$(python3 -c "print(f'{$ours/$ref:.2f}')")" "$old"
done
