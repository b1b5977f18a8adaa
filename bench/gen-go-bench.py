#!/usr/bin/env python3
"""Two Go benchmark files as `go test -bench . -count RUNS -benchmem` writes
them: BENCHMARKS benchmarks, each with ns/op, B/op and allocs/op, the B/op and
allocs/op the same in every run (as they are), and the first REGRESSED of them
PCT percent slower in the new file. Lognormal run-to-run noise of SPREAD
(relative). Deterministic for a SEED.

    bench/gen-go-bench.py OUT_DIR [BENCHMARKS=5000] [RUNS=10] [REGRESSED=500] [PCT=10] [SPREAD=0.02] [SEED=1]

Writes OUT_DIR/old.txt and OUT_DIR/new.txt, and prints the regressed names'
count. Used by bench/compare.sh (speed, against benchstat) and by the
measurement in docs/book/02-comparing.md (how many planted regressions each
tool finds).
"""
import math
import os
import random
import sys


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    regressed = int(sys.argv[4]) if len(sys.argv) > 4 else 500
    pct = float(sys.argv[5]) if len(sys.argv) > 5 else 10.0
    spread = float(sys.argv[6]) if len(sys.argv) > 6 else 0.02
    seed = int(sys.argv[7]) if len(sys.argv) > 7 else 1
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    names = []
    for i in range(n):
        family = ["Encode", "Decode", "Parse", "Sum", "Hash", "Sort", "Match", "Render"][i % 8]
        names.append(f"{family}/case={i}-8")
    centres = [math.exp(rng.uniform(math.log(20), math.log(2e6))) for _ in range(n)]
    bytes_ = [rng.choice([0, 16, 64, 256, 1024, 4096]) for _ in range(n)]
    allocs = [rng.randint(0, 40) for _ in range(n)]
    for side in ("old", "new"):
        lines = ["goos: linux", "goarch: amd64", "pkg: example.com/bench", "cpu: Generated CPU @ 3.00GHz"]
        for r in range(runs):
            for i, name in enumerate(names):
                c = centres[i] * (1 + pct / 100 if side == "new" and i < regressed else 1.0)
                v = c * math.exp(rng.gauss(0, spread))
                iters = max(1, int(1e9 / max(v, 1)))
                lines.append(
                    f"Benchmark{name} \t{iters:>10}\t{v:>12.1f} ns/op\t{bytes_[i]:>6} B/op\t{allocs[i]:>4} allocs/op"
                )
        lines.append("PASS")
        lines.append("ok  \texample.com/bench\t12.345s")
        with open(os.path.join(out, f"{side}.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    print(regressed)


if __name__ == "__main__":
    main()
