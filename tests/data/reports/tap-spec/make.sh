#!/usr/bin/env bash
# TAP edge cases and prove's verdict on each (Test::Harness 3.44, Debian 12's perl):
#   prove -e cat FILE
# writes expected.tsv: file, PASS or FAIL, tests run, prove's first parse error.
# Most files are hand-written (no producer writes tests out of order on purpose);
# more-perl.tap, noplan-perl.tap and skipall-perl.tap come from Test::More itself.
set -e
cd "$(dirname "$0")"
perl -e 'use Test::More tests => 2; ok(1, "a"); ok(1, "b"); ok(1, "c");' > more-perl.tap 2>/dev/null || true
perl -e 'use Test::More; ok(1, "a"); ok(0, "b"); exit 0;' > noplan-perl.tap 2>/dev/null || true
perl -e 'use Test::More skip_all => "no database"; ' > skipall-perl.tap 2>/dev/null || true
: > expected.tsv
for f in *.tap; do
  out=$(prove -e cat "$f" 2>&1 || true)
  verdict=$(printf '%s\n' "$out" | sed -n 's/^Result: //p')
  tests=$(printf '%s\n' "$out" | sed -n 's/.*Tests=\([0-9]*\),.*/\1/p')
  err=$(printf '%s\n' "$out" | sed -n 's/^ *Parse errors: //p' | head -1)
  printf '%s\t%s\t%s\t%s\n' "$f" "$verdict" "$tests" "$err" >> expected.tsv
done
