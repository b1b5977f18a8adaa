#!/usr/bin/env python3
"""One JUnit file of N test cases as bench/ingest.sh and bench/tests-diff.sh read it:
suites of 1,000 tests, 20 classes each, exponential times (mean 10 ms) times FACTOR,
1% failures. Usage: gen-junit.py PATH N [FACTOR [SEED]]"""
import random, sys
path, n = sys.argv[1], int(sys.argv[2])
factor = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
with open(path, "w") as f:
    f.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="big">\n')
    per = 1000
    for s in range(n // per):
        f.write(f'  <testsuite name="com.example.suite{s}" tests="{per}" time="{rng.uniform(1, 9):.3f}">\n')
        for t in range(per):
            child = '<failure message="boom" type="AssertionError">expected 1</failure>' if rng.random() < 0.01 else ''
            f.write(f'    <testcase classname="com.example.suite{s}.Class{t % 20}" name="test_case_number_{t}" time="{rng.expovariate(100) * factor:.4f}">{child}</testcase>\n')
        f.write('  </testsuite>\n')
    f.write('</testsuites>\n')
