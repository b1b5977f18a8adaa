#!/usr/bin/env bash
# Regenerate the real test reports in this directory with the real tools (run by hand; the
# outputs are committed). Needs: python3 + pytest, go, g++ + libgtest-dev, cmake >= 3.21,
# go-junit-report (go install github.com/jstemmer/go-junit-report/v2@latest).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# pytest: 6 tests (one failing, one skipped, one parametrized), both junit families.
mkdir -p "$work/py" && cat > "$work/py/test_sample.py" <<'PY'
import time, pytest
def test_fast(): pass
def test_sleepy(): time.sleep(0.02)
@pytest.mark.parametrize("n", [1, 2])
def test_param(n): time.sleep(0.005 * n)
def test_fails(): assert 1 == 2
@pytest.mark.skip(reason="not today")
def test_skipped(): pass
PY
(cd "$work/py" && python3 -m pytest -q -o junit_family=xunit2 --junitxml="$here/pytest-xunit2.xml" >/dev/null || true)
(cd "$work/py" && python3 -m pytest -q -o junit_family=xunit1 --junitxml="$here/pytest-xunit1.xml" >/dev/null || true)

# go test -json and go-junit-report: a test with subtests, a skip and a failure.
mkdir -p "$work/go" && cat > "$work/go/go.mod" <<'GO'
module example.com/sample
go 1.21
GO
cat > "$work/go/s_test.go" <<'GO'
package sample
import ("testing"; "time")
func TestParent(t *testing.T) {
	t.Run("a", func(t *testing.T) { time.Sleep(20 * time.Millisecond) })
	t.Run("b", func(t *testing.T) { time.Sleep(30 * time.Millisecond) })
}
func TestSkip(t *testing.T) { t.Skip("later") }
func TestFail(t *testing.T) { time.Sleep(10 * time.Millisecond); t.Fatal("boom") }
GO
(cd "$work/go" && go test -json ./... > "$here/go-test.json" || true)
(cd "$work/go" && go test -v ./... 2>&1 | go-junit-report > "$here/go-junit-report.xml" || true)

# GoogleTest from Debian, --gtest_output=xml.
cat > "$work/g.cc" <<'CC'
#include <gtest/gtest.h>
#include <thread>
TEST(Math, Adds) { EXPECT_EQ(2, 1 + 1); }
TEST(Math, Sleeps) { std::this_thread::sleep_for(std::chrono::milliseconds(15)); }
TEST(Math, DISABLED_Later) {}
TEST(Other, Fails) { EXPECT_EQ(1, 2); }
CC
g++ -O1 "$work/g.cc" -o "$work/g" -lgtest -lgtest_main -pthread
"$work/g" --gtest_output=xml:"$here/gtest.xml" >/dev/null || true

# CTest --output-junit (one test per process; suite time in whole seconds).
mkdir -p "$work/ct" && cat > "$work/ct/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.21)
project(sample NONE)
enable_testing()
add_test(NAME quick COMMAND true)
add_test(NAME slow COMMAND sleep 0.2)
add_test(NAME broken COMMAND false)
CM
(cd "$work/ct" && cmake -S . -B b >/dev/null && cd b && ctest --output-junit "$here/ctest.xml" >/dev/null || true)
echo "reports written to $here"
# seed000-before.xml / seed000-after.xml: examples/seed000/run.sh with OUT=tests/data/reports
# (renamed): the same pytest suite under the default and a 15.6 ms timer slack.
