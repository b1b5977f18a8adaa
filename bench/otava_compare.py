#!/usr/bin/env python3
"""Expected change points from Apache Otava for tardy's conformance test.

Writes tests/data/changepoints/corpus.json: every series tardy must get exactly
right, with Otava's change-point and weak change-point indices for several
option sets, full and incremental. The Rust test
(`tests/changepoints.rs`) reads it and compares index by index.

    pip install apache-otava==0.8.0
    python3 bench/otava_compare.py            # regenerate the corpus
    python3 bench/otava_compare.py --check    # regenerate and diff with tardy

The series: generated steps, ramps, outliers, noise levels, ties and short
series (seeded, so the file is reproducible), plus the series Otava's own
tests use (tests/tigerbeetle_test.py: the TigerBeetle demo data at Nyrkiö;
tests/analysis_test.py: the 20-point step), Apache-2.0, copied as data.
"""
import json
import math
import os
import random
import subprocess
import sys

import otava
from otava.analysis import compute_change_points

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "changepoints", "corpus.json")

OPTION_SETS = [
    {"window": 50, "p": 0.001, "magnitude": 0.0},
    {"window": 30, "p": 0.01, "magnitude": 0.05},
    {"window": 20, "p": 0.05, "magnitude": 0.0},
    {"window": 10, "p": 0.1, "magnitude": 0.01},
]

TIGERBEETLE = [26705, 26475, 26641, 26806, 26835, 26911, 26564, 26812, 26874, 26682, 15672, 26745, 26460, 26977, 26851, 23412, 23547, 23674, 23519, 23670, 23662, 23462, 23750, 23717, 23524, 23588, 23687, 23793, 23937, 23715, 23570, 23730, 23690, 23699, 23670, 23860, 23988, 23652, 23681, 23798, 23728, 23604, 23523, 23412, 23685, 23773, 23771, 23718, 23409, 23739, 23674, 23597, 23682, 23680, 23711, 23660, 23990, 23938, 23742, 23703, 23536, 24363, 24414, 24483, 24509, 24944, 24235, 24560, 24236, 24667, 24730, 28346, 28437, 28436, 28057, 28217, 28456, 28427, 28398, 28250, 28331, 28222, 28726, 28578, 28345, 28274, 28514, 28590, 28449, 28305, 28411, 28788, 28404, 28821, 28580, 27483, 26805, 27487, 27124, 26898, 27295, 26951, 27312, 27660, 27154, 27050, 26989, 27193, 27503, 27326, 27375, 27513, 27057, 27421, 27574, 27609, 27123, 27824, 27644, 27394, 27836, 27949, 27702, 27457, 27272, 28207, 27802, 27516, 27586, 28005, 27768, 28543, 28237, 27915, 28437, 28342, 27733, 28296, 28524, 28687, 28258, 28611, 29360, 28590, 29641, 28965, 29474, 29256, 28611, 28205, 28539, 27962, 28398, 28509, 28240, 28592, 28102, 28461, 28578, 28669, 28507, 28535, 28226, 28536, 28561, 28087, 27953, 28398, 28007, 28518, 28337, 28242, 28607, 28545, 28514, 28377, 28010, 28412, 28633, 28576, 28195, 28637, 28724, 28466, 28287, 28719, 28425, 28860, 28842, 28604, 28327, 28216, 28946, 28918, 29287, 28725, 29148, 29541, 29137, 29628, 29087, 28612, 29154, 29108, 28884, 29234, 28695, 28969, 28809, 28695, 28634, 28916, 29852, 29389, 29757, 29531, 29363, 29251, 29552, 29561, 29046, 29795, 29022, 29395, 28921, 29739, 29257, 29455, 29376, 29528, 28909, 29492, 28984, 29621, 29026, 29457, 29102, 29114, 28924, 29162, 29259, 29554, 29616, 29211, 29367, 29460, 28836, 29645, 29586, 28848, 29324, 28969, 29150, 29243, 29081, 29312, 28923, 29272, 29117, 29072, 29529, 29737, 29652, 29612, 29856, 29012, 30402, 29969, 29309, 29439, 29285, 29421, 29023, 28772, 29692, 29416, 29267, 29542, 29904, 30045, 29739, 29945, 29141, 29163, 29765, 29197, 29441, 28910, 29504, 29614, 29643, 29506, 29420, 29672, 29432, 29784, 29888, 29309, 29247, 29816, 29254, 29813, 29451, 29382, 29618, 28558, 29845, 29499, 29283, 29184, 29246, 28790, 29952, 29145, 29415, 30437, 29227, 29605, 29859, 29156, 29807, 29406, 29734, 29861, 29140, 29983, 29832, 29919, 29896, 29991, 29266, 29001, 29459, 29548, 29310, 29042, 29303, 29894, 29091, 29018, 29537, 29614, 29180, 29736, 29500, 29218, 29581, 28906, 28542, 29306, 28987, 29878, 28865, 30272, 29707, 29662, 29815, 30492, 29347, 30096, 29054, 30238, 28813, 31895, 28915]

OTAVA_STEP20 = [1.02, 0.95, 0.99, 1.00, 1.12, 1.00, 1.01, 0.98, 1.01, 0.96,
                0.50, 0.51, 0.48, 0.48, 0.55, 0.50, 0.49, 0.51, 0.50, 0.49]


def r(x):
    # Six significant digits: exact decimal text both sides parse identically.
    return float(f"{x:.6g}")


def generated(rng):
    out = []

    def add(name, values):
        out.append((name, [r(v) for v in values]))

    for k in range(12):
        n = rng.choice([60, 150, 300, 600])
        noise = rng.choice([0.01, 0.03, 0.06, 0.1])
        steps = sorted(rng.sample(range(5, n - 5), rng.randint(1, 4)))
        level, vals, si = 100.0, [], 0
        for i in range(n):
            while si < len(steps) and i >= steps[si]:
                level *= rng.choice([0.7, 0.9, 0.95, 1.05, 1.1, 1.5])
                si += 1
            vals.append(level * (1 + rng.gauss(0, noise)))
        add(f"steps-{k}", vals)
    for k in range(6):
        n = rng.choice([100, 250, 500])
        slope = rng.choice([0.0005, 0.002, -0.001])
        add(f"ramp-{k}", [100 * (1 + slope * i) * (1 + rng.gauss(0, 0.02)) for i in range(n)])
    for k in range(6):
        n = rng.choice([80, 200, 400])
        vals = [50 * (1 + rng.gauss(0, 0.02)) for _ in range(n)]
        for _ in range(rng.randint(1, 5)):
            vals[rng.randrange(n)] *= rng.choice([3, 0.3, 10])
        add(f"outliers-{k}", vals)
    for k in range(6):
        n = rng.choice([50, 120, 400, 1000])
        sd = rng.choice([0.005, 0.05, 0.3])
        add(f"noise-{k}", [10 * math.exp(rng.gauss(0, sd)) for _ in range(n)])
    for k in range(4):
        n = 200
        vals = [(30 if rng.random() < 0.3 else 20) + rng.gauss(0, 0.5) for _ in range(n)]
        add(f"bimodal-{k}", vals)
    for k in range(6):
        n = rng.choice([40, 100, 300])
        at = n // 2
        vals = [rng.randint(10, 13) + (rng.choice([1, 3, 0]) if i >= at else 0) for i in range(n)]
        add(f"ties-{k}", vals)
    for k in range(8):
        n = rng.randint(2, 30)
        add(f"short-{k}", [rng.choice([1.0, 2.0, 5.0]) + rng.gauss(0, 0.1) for _ in range(n)])
    add("flat-then-step", [5.0] * 40 + [7.0] * 40 + [5.0] * 20)
    add("constant", [3.0] * 120)
    return out


def otava(values, o, new=None, old=None):
    cps, weak = compute_change_points(list(values), window_len=o["window"], max_pvalue=o["p"],
                                      min_magnitude=o["magnitude"], new_data=new,
                                      old_weak_cp=old)
    return cps, weak


def main():
    rng = random.Random(20261121)
    series = [("otava-tigerbeetle", [float(x) for x in TIGERBEETLE]),
              ("otava-analysis-step20", OTAVA_STEP20)] + generated(rng)
    cases = []
    for name, values in series:
        option_sets = OPTION_SETS
        if name == "otava-tigerbeetle":
            # The option sets tests/tigerbeetle_test.py pins.
            option_sets = OPTION_SETS + [
                {"window": 30, "p": p, "magnitude": m}
                for p, m in [(0.05, 0.05), (0.1, 0.05), (0.2, 0.05), (0.1, 0.01), (0.2, 0.0),
                             (0.1, 0.0), (0.01, 0.0), (0.001, 0.0), (0.0001, 0.0), (0.00001, 0.0)]
            ]
        if name == "otava-analysis-step20":
            option_sets = OPTION_SETS + [{"window": 10, "p": 0.0001, "magnitude": 0.0}]
        for o in option_sets:
            cps, weak = otava(values, o)
            case = {"series": name, "options": o,
                    "change_points": [int(c.index) for c in cps],
                    "weak": [int(c.index) for c in weak]}
            # Incremental: the first 80% analysed, then the rest appended.
            if len(values) >= 20:
                cut = int(len(values) * 0.8)
                _, weak0 = otava(values[:cut], o)
                cps2, weak2 = otava(values, o, new=len(values) - cut, old=weak0)
                case["incremental"] = {"prefix": cut, "prefix_weak": [int(c.index) for c in weak0],
                                       "change_points": [int(c.index) for c in cps2],
                                       "weak": [int(c.index) for c in weak2]}
            cases.append(case)
    doc = {
        "generator": "bench/otava_compare.py",
        "otava": "apache-otava 0.8.0 (pip)",
        "series": {name: values for name, values in series},
        "cases": cases,
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"{len(series)} series, {len(cases)} cases -> {os.path.relpath(OUT)}")
    if "--check" in sys.argv:
        sys.exit(subprocess.call(["cargo", "test", "--test", "changepoints"], cwd=os.path.join(HERE, "..")))


if __name__ == "__main__":
    main()
