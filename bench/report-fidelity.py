#!/usr/bin/env python3
"""tardy's counts against each report's own totals, file by file, over tests/data/reports.

The producing tool's totals: JUnit `tests=`/`failures=`/`errors=`/`skipped=` (the root's, else
the sum over top-level suites), NUnit `total=`/`failed=`, TRX `<Counters>`, jest's
`numTotalTests`, mocha's `stats`, RSpec's `summary`, and for `go test -json` and Dart's stream
the test-level events. junitparser (the peer) counts JUnit `<testcase>` elements. Prints one line
per file and the agreement; exit 1 when a file disagrees and is not a known producer quirk.
Usage: bench/report-fidelity.py [TARDY]   (needs: pip install junitparser)
"""
import json, os, subprocess, sys, xml.etree.ElementTree as ET

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "tests", "data", "reports")
tardy = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "target", "debug", "tardy")
try:
    import junitparser
except ImportError:
    junitparser = None

# Producer quirks, said in README: pytest-rerunfailures counts every attempt in tests=;
# Surefire's rerun file of an @Nested class states fewer tests than it holds.
QUIRKS = {
    "pytest-rerun.xml": "pytest counts rerun attempts in tests=",
    "surefire-nested": "Surefire's rerun file of an @Nested class",
    "surefire": "Surefire with rerunFailingTestsCount states the last rerun pass's counts",
    "mocha-junit.xml": "mocha-junit-reporter counts pending tests it does not list",
}

def local(tag):
    return tag.rsplit("}", 1)[-1]

def stated(path):
    """(tests, failed incl. errors, skipped) as the file states them, or None."""
    name = os.path.basename(path)
    if os.path.isdir(path):
        t = [stated(os.path.join(path, f)) for f in sorted(os.listdir(path))]
        t = [x for x in t if x]
        return tuple(sum(x[i] for x in t) for i in range(3)) if t else None
    text = open(path, "rb").read()
    if text.lstrip().startswith(b"{"):
        lines = text.decode().splitlines()
        if '"Action"' in lines[0]:
            ev = [json.loads(l) for l in lines if l.strip()]
            tests = [e for e in ev if e.get("Test") and e["Action"] in ("pass", "fail", "skip")]
            return (len(tests), sum(e["Action"] == "fail" for e in tests), sum(e["Action"] == "skip" for e in tests))
        if '"protocolVersion"' in lines[0]:
            ev = [json.loads(l) for l in lines if l.strip()]
            done = [e for e in ev if e.get("type") == "testDone" and not e.get("hidden")]
            late = {e["testID"] for e in ev if e.get("type") == "error"}
            return (len(done), sum((e["result"] != "success" or e["testID"] in late) and not e["skipped"] for e in done), sum(e["skipped"] for e in done))
        d = json.loads(text)
        if "numTotalTests" in d:
            return (d["numTotalTests"], d["numFailedTests"] + d.get("numRuntimeErrorTestSuites", 0), d["numPendingTests"] + d.get("numTodoTests", 0))
        if "stats" in d:
            return (d["stats"]["tests"], d["stats"]["failures"], d["stats"]["pending"])
        if "examples" in d:
            s = d["summary"]
            return (s["example_count"], s["failure_count"], s["pending_count"])
        return None
    try:
        r = ET.fromstring(text)
    except ET.ParseError:
        return None
    tag = local(r.tag)
    if tag == "TestRun":
        c = next((e for e in r.iter() if local(e.tag) == "Counters"), None)
        if c is None:
            return None
        a = {k: int(v) for k, v in c.attrib.items()}
        failed = a.get("failed", 0) + a.get("error", 0) + a.get("timeout", 0) + a.get("aborted", 0)
        return (a["total"], failed, a["total"] - a.get("executed", a["total"]) + a.get("inconclusive", 0))
    if tag in ("test-run", "test-suite"):
        a = r.attrib
        return (int(a["total"]), int(a.get("failed", 0)), int(a.get("skipped", 0)))
    if tag == "test-results":
        a = r.attrib
        return (int(a["total"]) + int(a.get("not-run", 0)), int(a["failures"]) + int(a["errors"]), int(a.get("not-run", 0)))
    if tag == "assemblies":
        asm = [e for e in r if local(e.tag) == "assembly"]
        return (sum(int(e.get("total", 0)) for e in asm), sum(int(e.get("failed", 0)) for e in asm), sum(int(e.get("skipped", 0)) for e in asm))
    if tag in ("testsuites", "testsuite"):
        top = [r] if tag == "testsuite" else [e for e in r if local(e.tag) == "testsuite"]
        g = lambda s, k: int(float(s.get(k, 0) or 0))
        # Each total from the root when it states it, else summed over the top-level suites.
        def total(keys):
            if tag == "testsuites" and all(r.get(k) is not None for k in keys[:1]):
                return sum(g(r, k) for k in keys)
            if not all(s.get(keys[0]) is not None for s in top):
                return None
            return sum(g(s, k) for s in top for k in keys)
        t = total(["tests"])
        if t is None:
            return None
        return (t, total(["failures", "errors"]) or 0, total(["skipped", "disabled"]) or 0)
    return None

def peer(path):
    if junitparser is None or os.path.isdir(path) or not path.endswith(".xml"):
        return None
    try:
        x = junitparser.JUnitXml.fromfile(path)
        suites = [x] if isinstance(x, junitparser.TestSuite) else list(x)
        return sum(len(list(s)) for s in suites)
    except Exception:
        return None

files = []
for f in sorted(os.listdir(root)):
    p = os.path.join(root, f)
    if f in ("bad", "make.sh") or f.startswith("entity"):
        continue
    if f == "empty":
        files += [os.path.join(p, g) for g in sorted(os.listdir(p))]
    else:
        files.append(p)
agree = checked = bad = 0
for p in files:
    name = os.path.relpath(p, root)
    out = subprocess.run([tardy, "tests", "show", p, "--format", "json"], capture_output=True, text=True)
    if out.returncode != 0:
        print(f"{name:34} tardy error: {out.stderr.strip()}")
        bad += 1
        continue
    s = json.loads(out.stdout)
    by = s["by_status"]
    mine = (s["tests"], by.get("failed", 0) + by.get("errored", 0) + by.get("aborted", 0), by.get("skipped", 0))
    want = stated(p)
    jp = peer(p)
    if want is None:
        print(f"{name:34} tardy {mine}  (the file states no totals)  junitparser {jp}")
        continue
    checked += 1
    ok = mine == want
    agree += ok
    note = "" if ok else ("  quirk: " + QUIRKS[name] if name in QUIRKS else "  DIFFERENT")
    if not ok and name not in QUIRKS:
        bad += 1
    print(f"{name:34} tardy {mine}  file {want}  junitparser {jp}{note}")
print(f"agreement: {agree} of {checked} files with stated totals ({bad} unexplained)")
sys.exit(1 if bad else 0)
