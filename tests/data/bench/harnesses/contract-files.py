#!/usr/bin/env python3
"""Files for the two harnesses that cannot run here, written from each one's
published data contract (and said so in README.md):

- Julia's BenchmarkTools (`BenchmarkTools.save`, src/serialization.jl):
  `[{"Julia", "BenchmarkTools"}, [["BenchmarkGroup", {"data": ..., "tags": []}]]]`,
  each Trial `["Trial", {"params": ["Parameters", {...}], "times": [ns...],
  "gctimes": [...], "memory": bytes, "allocs": n}]`.
- Bencher Metric Format (bencher.dev/docs/reference/bencher-metric-format):
  `{"benchmark": {"latency": {"value", "lower_value", "upper_value"}}}`.

Run: python3 contract-files.py (seeded: the same files every time).
"""
import json
import random

rng = random.Random(47)


def params():
    return ["Parameters", {"seconds": 5.0, "samples": 10000, "evals": 1, "evals_set": False,
                           "overhead": 0.0, "gctrial": True, "gcsample": False,
                           "time_tolerance": 0.05, "memory_tolerance": 0.01}]


def trial(mean_ns, n, memory, allocs):
    times = sorted(rng.lognormvariate(0, 0.05) * mean_ns for _ in range(n))
    return ["Trial", {"params": params(), "times": times, "gctimes": [0.0] * n,
                      "memory": memory, "allocs": allocs}]


def julia(scale):
    suite = ["BenchmarkGroup", {"tags": [], "data": {
        "calc": ["BenchmarkGroup", {"tags": ["arith"], "data": {
            "sum": trial(1000.0 * scale, 200, 0, 0),
            "join": ["BenchmarkGroup", {"tags": [], "data": {
                "10": trial(300.0, 150, 496, 6),
                "100": trial(2500.0, 150, 4016, 9),
            }}],
        }}],
        "estimate": ["TrialEstimate", {"params": params(), "time": 1200.0 * scale,
                                       "gctime": 0.0, "memory": 0, "allocs": 0}],
    }}]
    return [{"Julia": "1.11.1", "BenchmarkTools": "1.5.0"}, [suite]]


def bmf(scale):
    def m(v):
        return {"value": v, "lower_value": v * 0.98, "upper_value": v * 1.02}
    return {
        "calc::sum": {"latency": m(1000.0 * scale)},
        "calc::join": {"latency": m(2500.0), "throughput": m(400000.0)},
        "binary": {"file-size": {"value": 1048576.0}},
    }


for side, scale in [("before", 1.0), ("after", 3.0)]:
    with open(f"julia-{side}.json", "w") as f:
        json.dump(julia(scale), f)
    with open(f"bencher-{side}.json", "w") as f:
        json.dump(bmf(scale), f, indent=2)
