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

# go test -json runs that failed without a failing test event (Go 1.26): a package that does
# not build, a TestMain that exits 2, a test binary that panics in a goroutine while tests
# run, a -timeout while two parallel tests run, a panic after m.Run passed; one package passes.
mkdir -p "$work/gofail" && (cd "$work/gofail" && printf 'module example.com/gofail\ngo 1.22\n' > go.mod \
  && mkdir ok broken mainexit timeout crash late \
  && printf 'package ok\nimport ("testing"; "time")\nfunc TestFine(t *testing.T) { time.Sleep(5 * time.Millisecond) }\nfunc TestSub(t *testing.T) { t.Run("a", func(t *testing.T) {}) }\n' > ok/ok_test.go \
  && printf 'package broken\nimport "testing"\nfunc TestNope(t *testing.T) { var x int = "no"; _ = x }\n' > broken/b_test.go \
  && printf 'package mainexit\nimport ("fmt"; "os"; "testing")\nfunc TestMain(m *testing.M) { fmt.Println("setup: cannot reach the database"); os.Exit(2) }\nfunc TestNever(t *testing.T) {}\n' > mainexit/m_test.go \
  && printf 'package timeout\nimport ("testing"; "time")\nfunc TestQuick(t *testing.T) {}\nfunc TestSlowA(t *testing.T) { t.Parallel(); time.Sleep(10 * time.Second) }\nfunc TestSlowB(t *testing.T) { t.Parallel(); time.Sleep(10 * time.Second) }\n' > timeout/t_test.go \
  && printf 'package crash\nimport ("testing"; "time")\nfunc TestOK(t *testing.T) {}\nfunc TestWaits(t *testing.T) { t.Parallel(); time.Sleep(2 * time.Second) }\nfunc TestBoom(t *testing.T) { t.Parallel(); go func() { panic("worker exploded") }(); time.Sleep(time.Second) }\n' > crash/c_test.go \
  && printf 'package late\nimport ("os"; "testing")\nfunc TestA(t *testing.T) {}\nfunc TestB(t *testing.T) {}\nfunc TestMain(m *testing.M) { code := m.Run(); if code == 0 { panic("cleanup: could not remove the scratch database") }; os.Exit(code) }\n' > late/l_test.go \
  && { go test -json -timeout 2s ./... > "$here/go-test-failures.json" 2>/dev/null || true; } \
  && { (echo "##[group]Run go test -json ./..."; echo "go: downloading example.com/dep v1.2.0"; \
        GODEBUG=gotestjsonbuildtext=1 go test -json ./broken ./ok 2>&1) > "$here/go-test-buildtext.json" || true; })

# go test -json, twice: only TestRender/big slows down (20 -> 60 ms), a subtest of TestRender
# beside five tests that do not move (tests diff must not count the parent beside it).
mkdir -p "$work/gosub" && (cd "$work/gosub" && printf 'module example.com/render\ngo 1.21\n' > go.mod \
  && printf 'package render\nimport ("testing"; "time"; "os"; "strconv")\nfunc TestRender(t *testing.T) {\n\tbig, _ := strconv.Atoi(os.Getenv("BIG"))\n\tt.Run("small", func(t *testing.T) { time.Sleep(5 * time.Millisecond) })\n\tt.Run("medium", func(t *testing.T) { time.Sleep(10 * time.Millisecond) })\n\tt.Run("big", func(t *testing.T) { time.Sleep(time.Duration(big) * time.Millisecond) })\n}\nfunc TestParse(t *testing.T) { time.Sleep(15 * time.Millisecond) }\nfunc TestEncode(t *testing.T) { time.Sleep(12 * time.Millisecond) }\nfunc TestDecode(t *testing.T) { time.Sleep(8 * time.Millisecond) }\n' > r_test.go \
  && BIG=20 go test -count=1 -json ./... > "$here/go-subtest-before.json" \
  && BIG=60 go test -count=1 -json ./... > "$here/go-subtest-after.json")

# Wide encodings, derived with iconv (Windows tools write UTF-16 XML): nunit3.xml as UTF-16
# with its byte-order mark, gtest.xml (below) as UTF-32BE without one, each declaring it.
# junit-suite-error.xml is written by hand (see its comment).
derive_wide() {
  sed 's/encoding="utf-8"/encoding="UTF-16"/I' "$here/nunit3.xml" | iconv -f UTF-8 -t UTF-16 > "$here/nunit3-utf16.xml"
  sed 's/encoding="UTF-8"/encoding="UTF-32"/I' "$here/gtest.xml" | iconv -f UTF-8 -t UTF-32BE > "$here/gtest-utf32be.xml"
}
trap 'derive_wide; rm -rf "$work"' EXIT

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

# Maven Surefire 3.2.5 + JUnit 5 with rerunFailingTestsCount=2: flakyFailure/rerunFailure.
# surefire-nested/ is the same class with an @Nested class: Surefire then writes the first
# attempts into TEST-calc.CalcTest$Inner.xml and the reruns into TEST-calc.CalcTest.xml.
mkdir -p "$work/mvn/src/test/java/calc" && cat > "$work/mvn/pom.xml" <<'POM'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>calc</groupId><artifactId>calc</artifactId><version>1</version>
  <properties><maven.compiler.release>17</maven.compiler.release><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <dependencies>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId><version>5.10.2</version><scope>test</scope></dependency>
  </dependencies>
  <build><plugins><plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin><plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version>
    <configuration><rerunFailingTestsCount>2</rerunFailingTestsCount><testFailureIgnore>true</testFailureIgnore></configuration></plugin></plugins></build>
</project>
POM
cat > "$work/mvn/src/test/java/calc/CalcTest.java" <<'JAVA'
package calc;
import org.junit.jupiter.api.*;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import static org.junit.jupiter.api.Assertions.*;
class CalcTest {
  static int attempts = 0;
  @Test void adds() { assertEquals(2, 1 + 1); }
  @Test void sleeps() throws Exception { Thread.sleep(25); }
  @Test void flaky() { attempts++; assertTrue(attempts > 1, "fails the first time"); }
  @Test void fails() { assertEquals(1, 2); }
  @Test void errors() { throw new IllegalStateException("boom"); }
  @Disabled("later") @Test void later() {}
  @ParameterizedTest @ValueSource(ints = {1, 2}) void param(int n) throws Exception { Thread.sleep(5L * n); }
  @Nested class Inner { @Test void nestedSleeps() throws Exception { Thread.sleep(10); } }
}
JAVA
(cd "$work/mvn" && mvn -q -B test >/dev/null)
rm -rf "${here:?}/surefire-nested" && mkdir -p "$here/surefire-nested"
cp "$work/mvn/target/surefire-reports/"*.xml "$here/surefire-nested/"
sed -i '/@Nested/d' "$work/mvn/src/test/java/calc/CalcTest.java"
(cd "$work/mvn" && rm -rf target && mvn -q -B test >/dev/null)
rm -rf "${here:?}/surefire" && mkdir -p "$here/surefire" && cp "$work/mvn/target/surefire-reports/"*.xml "$here/surefire/"

# jest + jest-junit, mocha + mocha-junit-reporter, mocha's built-in xunit reporter.
mkdir -p "$work/js/__tests__" "$work/js/test"
(cd "$work/js" && npm init -y >/dev/null && npm install --no-audit --no-fund jest@30 jest-junit mocha@10 mocha-junit-reporter >/dev/null 2>&1)
cat > "$work/js/__tests__/calc.test.js" <<'JS'
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
describe('Calc', () => {
  test('adds', () => { expect(1 + 1).toBe(2); });
  test('sleeps', async () => { await sleep(25); });
  test('fails', () => { expect(1).toBe(2); });
  test.skip('later', () => {});
  describe('nested', () => { test.each([1, 2])('param %i', async (n) => { await sleep(5 * n); }); });
});
JS
cat > "$work/js/test/calc.spec.js" <<'JS'
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
describe('Calc', () => {
  it('adds', () => { require('assert').strictEqual(1 + 1, 2); });
  it('sleeps', async () => { await sleep(25); });
  it('fails', () => { require('assert').strictEqual(1, 2); });
  it.skip('later', () => {});
  describe('nested', () => { [1, 2].forEach((n) => it('param ' + n, async () => { await sleep(5 * n); })); });
});
JS
(cd "$work/js" && JEST_JUNIT_OUTPUT_FILE="$here/jest-junit.xml" npx jest __tests__ --reporters=default --reporters=jest-junit >/dev/null 2>&1 || true)
(cd "$work/js" && MOCHA_FILE="$here/mocha-junit.xml" npx mocha --reporter mocha-junit-reporter test/ >/dev/null 2>&1 || true)
(cd "$work/js" && npx mocha --reporter xunit --reporter-option output="$here/mocha-xunit.xml" test/ >/dev/null 2>&1 || true)

# CTRF from jest-ctrf-json-reporter: the same Calc suite with a todo, and a test that passes on
# its retry (jest.retryTimes).
mkdir -p "$work/ctrf/__tests__" && cp "$work/js/__tests__/calc.test.js" "$work/ctrf/__tests__/" \
  && sed -i "s/  test.skip('later', () => {});/  test.skip('later', () => {});\n  test.todo('someday');/" "$work/ctrf/__tests__/calc.test.js" \
  && printf "let n = 0;\njest.retryTimes(2);\ntest('flaky once', () => { n += 1; expect(n).toBeGreaterThan(1); });\n" > "$work/ctrf/__tests__/retry.test.js"
(cd "$work/ctrf" && npm init -y >/dev/null && npm install --no-audit --no-fund jest@30 jest-ctrf-json-reporter >/dev/null 2>&1 \
  && npx jest --reporters=default --reporters=jest-ctrf-json-reporter >/dev/null 2>&1; cp ctrf/ctrf-report.json "$here/ctrf-jest.json" || true)

# TAP: node's test runner (--test-reporter=tap) and Perl's Test::More, the same Calc tests with
# a todo and a nested group; a Perl script that dies after 2 of its 4 planned tests.
mkdir -p "$work/tap/t" && cat > "$work/tap/calc.test.mjs" <<'JS'
import { test, describe, it } from 'node:test';
import assert from 'node:assert';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
test('adds', () => { assert.strictEqual(1 + 1, 2); });
test('sleeps', async () => { await sleep(25); });
test('fails', () => { assert.strictEqual(1, 2); });
test('later', { skip: 'not today' }, () => {});
test('someday', { todo: 'write it' }, () => {});
describe('nested', () => {
  it('param 1', async () => { await sleep(5); });
  it('param 2', async () => { await sleep(10); });
  describe('deeper', () => { it('inner', () => {}); });
});
JS
cat > "$work/tap/t/calc.t" <<'PL'
use strict; use warnings;
use Test::More tests => 6;
use Time::HiRes qw(sleep);
ok(1 + 1 == 2, 'adds');
sleep 0.02; ok(1, 'sleeps');
is(1, 2, 'fails');
SKIP: { skip 'not today', 1; ok(1, 'later'); }
TODO: { local $TODO = 'write it'; ok(0, 'someday'); }
subtest 'nested' => sub { plan tests => 2; ok(1, 'param 1'); ok(1, 'param 2'); };
PL
printf 'use strict; use warnings;\nuse Test::More tests => 4;\nok(1, "first");\nok(1, "second");\ndie "cannot open fixture: No such file or directory\\n";\n' > "$work/tap/t/dies.t"
(cd "$work/tap" && node --test --test-reporter=tap calc.test.mjs > "$here/node-test.tap" || true)
(cd "$work/tap" && perl t/calc.t > "$here/perl-test-more.tap" 2>/dev/null || true)
(cd "$work/tap" && perl t/dies.t > "$here/perl-dies.tap" 2>/dev/null || true)

# Allure 2 results from allure-pytest, with pytest-rerunfailures (a test that passes on its
# rerun: two results with one historyId) and a test that raises (broken).
mkdir -p "$work/allure" && cat > "$work/allure/test_sample.py" <<'PY'
import time, pytest
def test_fast(): pass
def test_sleepy(): time.sleep(0.02)
@pytest.mark.parametrize("n", [1, 2])
def test_param(n): time.sleep(0.005 * n)
def test_fails(): assert 1 == 2
def test_broken(): raise RuntimeError("boom")
@pytest.mark.skip(reason="not today")
def test_skipped(): pass
_calls = {"n": 0}
@pytest.mark.flaky(reruns=2)
def test_flaky():
    _calls["n"] += 1
    assert _calls["n"] > 1
PY
rm -rf "$here/allure-pytest"
(cd "$work/allure" && python3 -m pytest -q -p no:cacheprovider --alluredir="$here/allure-pytest" >/dev/null || true)

# PHPUnit 9.6 (Debian) --log-junit: nested suites, data sets as a suite of their own.
mkdir -p "$work/php/tests" && cat > "$work/php/tests/CalcTest.php" <<'PHP'
<?php
use PHPUnit\Framework\TestCase;
final class CalcTest extends TestCase {
    public function testAdds(): void { $this->assertSame(2, 1 + 1); }
    public function testSleeps(): void { usleep(25000); }
    public function testFails(): void { $this->assertSame(1, 2); }
    public function testErrors(): void { throw new RuntimeException('boom'); }
    public function testLater(): void { $this->markTestSkipped('later'); }
    /** @dataProvider sizes */
    public function testParam(int $n): void { usleep(5000 * $n); }
    public static function sizes(): array { return ['one' => [1], 'two' => [2]]; }
}
PHP
(cd "$work/php" && phpunit --log-junit "$here/phpunit.xml" tests >/dev/null 2>&1 || true)

# RSpec 3 + rspec_junit_formatter 0.4 (Debian).
mkdir -p "$work/rb/spec" && cat > "$work/rb/spec/calc_spec.rb" <<'RB'
RSpec.describe "Calc" do
  it("adds") { expect(1 + 1).to eq(2) }
  it("sleeps") { sleep 0.025 }
  it("fails") { expect(1).to eq(2) }
  it("later") { skip "later" }
  context "nested" do
    [1, 2].each { |n| it("param #{n}") { sleep 0.005 * n } }
  end
end
RB
(cd "$work/rb" && rspec --format RspecJunitFormatter --out "$here/rspec.xml" >/dev/null 2>&1 || true)

# cargo-nextest 0.9 (cargo install cargo-nextest), profile with retries = 2 and JUnit output:
# flakyFailure for a test that passes on its second try, rerunFailure for one that never does.
mkdir -p "$work/nx/.config" "$work/nx/src"
printf '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n' > "$work/nx/Cargo.toml"
printf '[profile.ci]\nretries = 2\nfail-fast = false\n[profile.ci.junit]\npath = "junit.xml"\n' > "$work/nx/.config/nextest.toml"
cat > "$work/nx/src/lib.rs" <<'RS'
#[cfg(test)]
mod tests {
    use std::time::Duration;
    #[test]
    fn adds() { assert_eq!(1 + 1, 2); }
    #[test]
    fn sleeps() { std::thread::sleep(Duration::from_millis(25)); }
    #[test]
    fn fails() { assert_eq!(1, 2); }
    #[test]
    #[ignore]
    fn later() {}
    #[test]
    fn flaky() {
        // nextest runs each test in its own process: a file makes it fail only the first time.
        let p = std::env::temp_dir().join("tardy-nextest-flaky");
        if std::fs::metadata(&p).is_err() { std::fs::write(&p, "1").unwrap(); panic!("fails the first time"); }
        std::fs::remove_file(&p).unwrap();
    }
    mod nested { #[test] fn param_1() { std::thread::sleep(std::time::Duration::from_millis(5)); } }
}
RS
rm -f "${TMPDIR:-/tmp}/tardy-nextest-flaky"
(cd "$work/nx" && cargo nextest run --profile ci >/dev/null 2>&1 || true)
cp "$work/nx/target/nextest/ci/junit.xml" "$here/nextest.xml"

# Issue 14 corpus (real tools; each file's producing tool's own totals are asserted in
# src/ingest/reports/mod.rs):
# - jest-junit-same-title.xml, jest.json, mocha.json, empty/jest-junit.xml: the jest and mocha
#   suites above plus `describe('same', ...)` with three tests titled "checks a value";
#   `npx jest --json --outputFile=jest.json` (numTotalTests 9), `npx mocha --reporter json`
#   (stats.tests 9), and an empty jest run with --passWithNoTests (tests="0").
# - rspec.json: RSpec 3.12 `rspec --format json` on the spec above plus a pending example and
#   three examples titled "checks a value" (summary: 10 examples, 1 failure, 2 pending).
# - pytest-rerun.xml / pytest-teardown.xml: pytest 9.2 + pytest-rerunfailures 16.7,
#   `pytest --reruns 2 --junitxml=...` and without --reruns, on tests that pass, fail once,
#   always fail, and fail in a fixture's teardown (tests="8" / tests="6").
# - surefire-testng/: Maven Surefire 3.2.5 + TestNG 7.8 (data provider of 4, a test with
#   invocationCount = 3, one skipped by a failed dependency): tests="10".
# Written by hand from the formats' schemas (no NUnit 2, dotnet or Dart here): nunit2-failures.xml,
# nunit3-assembly-root.xml, junit-nameless.xml, junit-disabled-failure.xml, vstest-aborted.trx,
# dart.json (the Dart test package's JSON reporter protocol 0.1.1), empty/{phpunit.xml,vstest.trx,
# go-test.json,junit-zero.xml}.
echo "reports written to $here"
# seed000-before.xml / seed000-after.xml: examples/nunit-sleep/run.sh with OUT=tests/data/reports
# (renamed): the same pytest suite under the default and a 15.6 ms timer slack.
# Issue 47 (real tools, run in /work/pw with `npm install @playwright/test @cucumber/cucumber`):
# - cucumber-js.json: cucumber-js 12.9.0, `npx cucumber-js --format json:cucumber.json` on a
#   Calculator feature with a Background, a passing, a failing and an undefined-step scenario
#   and a two-row Scenario Outline (cucumber-js: 5 scenarios, 1 failed, 1 undefined, 3 passed).
# - playwright.json: @playwright/test's `--reporter=json`, retries 1, one project "node", no
#   browser (tests that use none): adds, fails, flaky (fails in both workers), a skipped test and a
#   describe with a 30 ms test and one timing out (stats: expected 2, unexpected 3, skipped 1).
# - tap-spec/: TAP edge cases and `prove`'s verdict on each (tap-spec/make.sh).
# - allure1/: Allure 1 XML (allure-java 1.x, `ns2:test-suite`), written by hand from allure-model
#   1.5's schema (allure-java 1.x no longer builds here): 6 cases, passed 2, failed 1, broken 1,
#   pending 1, canceled 1.
# - allure-legacy/: allure-pytest/'s result files without historyId, fullName and testCaseId, as
#   older allure-java and other producers write them (derived: `json.load`, pop, `json.dump`).
