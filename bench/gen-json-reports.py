#!/usr/bin/env python3
"""Large test reports in the JSON formats tardy reads, shaped as their tools write them.

Usage: gen-json-reports.py KIND PATH N [FACTOR [SEED]]
  KIND: jest (jest --json), mocha (mocha --reporter json), go (go test -json)
  N tests in files/packages of 1,000; 1% fail; durations exponential (mean 10 ms)
  times FACTOR (1.0 by default), from SEED (1).
"""
import json, random, sys

kind, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
factor = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 1)
PER = 1000


def ms():
    return max(0, round(rng.expovariate(100) * factor * 1000))


with open(path, "w") as f:
    w = f.write
    if kind == "jest":
        w('{"numTotalTests": %d, "success": false, "startTime": 0, "testResults": [' % n)
        for s in range((n + PER - 1) // PER):
            w("," if s else "")
            w('{"name": "/home/ci/repo/src/module%d/file%d.test.js", "status": "passed", "startTime": 0, "endTime": 1000, "assertionResults": [' % (s % 50, s))
            for t in range(min(PER, n - s * PER)):
                failed = rng.random() < 0.01
                w("," if t else "")
                w(json.dumps({"ancestorTitles": ["suite %d" % s], "fullName": "suite %d renders item %d" % (s, t),
                              "status": "failed" if failed else "passed", "title": "renders item %d" % t,
                              "duration": ms(), "failureMessages": ["Error: expected 1"] if failed else []}))
            w("]}")
        w("]}\n")
    elif kind == "mocha":
        w('{"stats": {"tests": %d, "duration": 1000}, "tests": [' % n)
        failures, passes = [], []
        for i in range(n):
            s, t = divmod(i, PER)
            failed = rng.random() < 0.01
            d = {"title": "renders item %d" % t, "fullTitle": "suite %d renders item %d" % (s, t),
                 "file": "/home/ci/repo/test/module%d/file%d.spec.js" % (s % 50, s),
                 "duration": ms(), "currentRetry": 0, "speed": "fast",
                 "err": {"message": "expected 1", "stack": "AssertionError"} if failed else {}}
            text = json.dumps(d)
            w(("," if i else "") + text)
            (failures if failed else passes).append(text)
        w('], "pending": [], "failures": [')
        w(",".join(failures))
        w('], "passes": [')  # mocha lists every passing test again
        w(",".join(passes))
        w("]}\n")
    elif kind == "go":
        for i in range(n):
            p, t = divmod(i, PER)
            pkg = "example.com/repo/pkg%d" % p
            w(json.dumps({"Time": "2026-11-28T10:00:00Z", "Action": "run", "Package": pkg, "Test": "TestCase%d" % t}) + "\n")
            failed = rng.random() < 0.01
            w(json.dumps({"Time": "2026-11-28T10:00:00Z", "Action": "output", "Package": pkg, "Test": "TestCase%d" % t,
                          "Output": "=== RUN   TestCase%d\n" % t}) + "\n")
            w(json.dumps({"Time": "2026-11-28T10:00:00Z", "Action": "fail" if failed else "pass", "Package": pkg,
                          "Test": "TestCase%d" % t, "Elapsed": ms() / 1000}) + "\n")
            if t == PER - 1 or i == n - 1:
                w(json.dumps({"Time": "2026-11-28T10:00:00Z", "Action": "pass", "Package": pkg, "Elapsed": 1.0}) + "\n")
    else:
        sys.exit("KIND: jest, mocha or go")
