#!/usr/bin/env bash
# Regenerate the golden outputs from the real ministat (Debian 20150715: apt-get install ministat).
# For each line of cases.txt, N.out / N.err / N.code hold what `ministat ARGS` printed and returned,
# run in this directory with stdin from /dev/null: e.g. 01.* is `ministat -s -w 60 iguana chameleon`.
set -euo pipefail
cd "$(dirname "$0")"
rm -rf golden && mkdir golden
n=0
while IFS= read -r args; do
  n=$((n + 1)); id=$(printf '%02d' "$n")
  # shellcheck disable=SC2086
  set +e; ministat $args > "golden/$id.out" 2> "golden/$id.err" < /dev/null; echo $? > "golden/$id.code"; set -e
  printf 'ministat %s\n' "$args" > "golden/$id.cmd"
done < cases.txt
echo "$n golden cases written"
