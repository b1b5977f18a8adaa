#!/usr/bin/env bash
# NUnit 3.4's Thread.Sleep(1) under Windows' 15.6 ms timer, on Linux: the same test suite, run with the default timer slack (before) and with
# a 15.6 ms timer slack (after, like Windows' default timer resolution), then
# `tardy tests diff` names the constant per-test overhead and the quantum it matches.
# Needs python3 with pytest. TARDY=path/to/tardy to use a particular build.
set -euo pipefail
cd "$(dirname "$0")"
TARDY=${TARDY:-tardy}
out=${OUT:-.}
python3 -m pytest -q -p no:cacheprovider --junitxml="$out/before.xml" suite >/dev/null
./with_timer_slack.py 15600000 python3 -m pytest -q -p no:cacheprovider --junitxml="$out/after.xml" suite >/dev/null
"$TARDY" tests diff "$out/before.xml" --vs "$out/after.xml" --top 5 "$@"
