#!/usr/bin/env bash
# NUnit 3.4's Thread.Sleep(1) as a bisection: a small "test suite" whose harness waits for events. For ten
# commits it waits by running a tiny process (no timer involved); commit 8 ("event
# queue: wait with a 1 ms sleep") swaps that for `sleep 0.001`, like NUnit 3.4's
# Thread.Sleep(1). Commit 3 adds tests, making the suite slower for everyone, which a
# plain timing bisection would blame. Under a coarse timer (condition B: a 15.6 ms timer
# slack, Linux's stand-in for Windows' default timer resolution) the sleep costs 15.6 ms;
# under the default (A) about 1.1 ms. `tardy bisect` in sensitivity mode bisects the
# ratio B/A and names commit 8; --explain then records commit 8 against commit 7 and
# shows where the extra time went: 14 one-millisecond sleeps, each taking 14-16 ms.
#
#   examples/nunit-sleep-bisect/run.sh            (uses tardy from PATH, or TARDY=path)
set -euo pipefail
TARDY=${TARDY:-tardy}
TARDY=$(command -v "$TARDY")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
git init -q && git config user.email dev@example.com && git config user.name "A. Developer"
suite() { # $1: tests, $2: wait command
  printf 'wait_for_event() { %s; }\nfor t in $(seq %s); do wait_for_event; wait_for_event; done\n' "$2" "$1" > suite.sh
}
suite 4 /bin/true
git add . && git commit -qm "harness: first version"
for i in $(seq 1 12); do
  case $i in
    3) suite 7 /bin/true; msg="add three tests" ;;
    8) suite 7 "sleep 0.001"; msg="event queue: wait with a 1 ms sleep" ;;
    *) echo "$i" > notes.txt; msg="docs: note $i" ;;
  esac
  git add . && git commit -qm "$msg"
done
"$TARDY" bisect --good HEAD~12 --bad HEAD \
  --prefix-a "$TARDY exec --timer-slack 50000 --" \
  --prefix-b "$TARDY exec --timer-slack 15600000 --" \
  --explain -- sh suite.sh
"$TARDY" bisect reset > /dev/null
