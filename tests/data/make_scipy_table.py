#!/usr/bin/env python3
"""Reference p-values for tardy's two-sample tests, computed with scipy.

Run:  python3 tests/data/make_scipy_table.py > tests/data/scipy_pvalues.json
(scipy and numpy from pip). tests/stats_scipy.rs checks tardy against every case to 1e-9.
"""
import json
import numpy as np
import scipy
from scipy import stats

rng = np.random.default_rng(20261121)
cases = []

def add(name, a, b):
    a = [float(x) for x in a]
    b = [float(x) for x in b]
    ties = len(set(a + b)) < len(a) + len(b)
    case = {
        "name": name,
        "a": a,
        "b": b,
        "student_p": float(stats.ttest_ind(b, a, equal_var=True).pvalue),
        "welch_p": float(stats.ttest_ind(b, a, equal_var=False).pvalue),
        "mwu_asymptotic_p": float(stats.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic").pvalue),
        # scipy's exact method ignores ties, so it is only a reference without them.
        "mwu_exact_p": None if ties else float(stats.mannwhitneyu(a, b, alternative="two-sided", method="exact").pvalue),
    }
    cases.append(case)

add("ministat iguana vs chameleon", [50, 200, 150, 400, 750, 400, 150], [150, 400, 720, 500, 930])
add("tiny shift", [1.0, 1.1, 0.9, 1.05, 0.95], [1.2, 1.3, 1.1, 1.25, 1.15])
add("3 vs 3 extreme", [1, 2, 3], [4, 5, 6])
add("4 vs 4", [1, 2, 3, 4], [5, 6, 7, 8])
add("unequal sizes", [10.1, 10.3, 9.8, 10.0], [10.5, 10.9, 10.4, 11.0, 10.7, 10.6, 10.8])
for i, (n1, n2, shift, sd) in enumerate([(5, 5, 0.0, 1.0), (8, 12, 0.5, 1.0), (10, 10, 1.0, 1.0),
                                          (20, 20, 0.2, 1.0), (30, 25, 0.0, 2.0), (50, 50, 0.3, 1.0),
                                          (12, 40, 0.8, 0.5), (60, 70, 0.1, 1.0), (200, 150, 0.05, 1.0)]):
    a = np.round(rng.normal(10.0, sd, n1), 6)
    b = np.round(rng.normal(10.0 + shift, sd, n2), 6)
    add(f"normal {n1}+{n2} shift {shift}", a, b)
for i, (n1, n2) in enumerate([(6, 7), (15, 15), (30, 40), (80, 80)]):
    # Lognormal timings rounded to 0.1 ms: ties.
    a = np.round(rng.lognormal(np.log(10.0), 0.05, n1), 1)
    b = np.round(rng.lognormal(np.log(10.2), 0.05, n2), 1)
    add(f"lognormal with ties {n1}+{n2}", a, b)

print(json.dumps({"scipy": scipy.__version__, "numpy": np.__version__, "cases": cases}, indent=1))
