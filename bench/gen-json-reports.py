#!/usr/bin/env python3
"""Large test reports in the JSON formats tardy reads, shaped as their tools write them.

Usage: gen-json-reports.py KIND PATH N [FACTOR [SEED]]
  KIND: jest (jest --json), mocha (mocha --reporter json), go (go test -json),
        cucumber (cucumber-js --format json: scenarios of 4 steps and a hook),
        playwright (playwright test --reporter=json: one project, files of 1,000)
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
    elif kind == "cucumber":
        w("[")
        for s in range((n + PER - 1) // PER):
            w("," if s else "")
            w('{"description": "", "elements": [')
            for t in range(min(PER, n - s * PER)):
                failed = rng.random() < 0.01
                steps = [{"arguments": [], "keyword": "Given ", "line": 3 + k, "name": "step %d" % k,
                          "match": {"location": "features/steps.js:%d" % k},
                          "result": {"status": "failed" if failed and k == 3 else "passed", "duration": ms() * 250000}}
                         for k in range(4)]
                w("," if t else "")
                w(json.dumps({"description": "", "id": "feature-%d;scenario-%d" % (s, t), "keyword": "Scenario",
                              "line": 3 + t, "name": "scenario %d" % t, "steps": steps, "tags": [], "type": "scenario",
                              "before": [{"keyword": "Before", "result": {"status": "passed", "duration": 1000}}]}))
            w('], "id": "feature-%d", "line": 1, "keyword": "Feature", "name": "Feature %d", "tags": [], '
              '"uri": "features/module%d/f%d.feature"}' % (s, s, s % 50, s))
        w("]\n")
    elif kind == "playwright":
        w('{"config": {"version": "1.49.0"}, "suites": [')
        for s in range((n + PER - 1) // PER):
            w("," if s else "")
            f = "module%d/f%d.spec.ts" % (s % 50, s)
            w('{"title": "%s", "file": "%s", "line": 0, "column": 0, "specs": [' % (f, f))
            for t in range(min(PER, n - s * PER)):
                failed = rng.random() < 0.01
                w("," if t else "")
                w(json.dumps({"title": "renders item %d" % t, "ok": not failed, "tags": [], "id": "%d-%d" % (s, t),
                              "file": f, "line": 3 + t, "column": 5,
                              "tests": [{"timeout": 30000, "annotations": [], "expectedStatus": "passed",
                                         "projectId": "chromium", "projectName": "chromium",
                                         "results": [{"workerIndex": 0, "status": "failed" if failed else "passed",
                                                      "duration": ms(), "errors": [], "stdout": [], "stderr": [],
                                                      "retry": 0, "startTime": "2026-11-28T10:00:00.000Z",
                                                      "attachments": []}],
                                         "status": "unexpected" if failed else "expected"}]}))
            w("]}")
        w('], "errors": [], "stats": {"expected": %d}}\n' % n)
    else:
        sys.exit("KIND: jest, mocha, go, cucumber or playwright")
