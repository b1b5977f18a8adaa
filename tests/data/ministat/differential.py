#!/usr/bin/env python3
"""Differential test: `tardy ministat ARGS` against the real ministat on random inputs.

Usage: python3 tests/data/ministat/differential.py TARDY_BINARY [CASES] [SEED]
Needs ministat (apt-get install ministat). Prints each differing case and exits 1 if any.
"""
import os, random, subprocess, sys, tempfile

tardy = os.path.abspath(sys.argv[1])
cases = int(sys.argv[2]) if len(sys.argv) > 2 else 500
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)

def number():
    kind = rng.random()
    if kind < 0.3:
        return str(rng.randint(-5, 50))
    if kind < 0.6:
        return f"{rng.gauss(100, 15):.{rng.randint(0, 4)}f}"
    if kind < 0.75:
        return f"{rng.lognormvariate(0, 2):.6g}"
    if kind < 0.85:
        return f"{rng.uniform(1e-6, 1e-3):.3e}"
    return rng.choice(["1e3", "2.5E2", "0.1", "007", "+3", "-0"])

def dataset(path, columns):
    base = [number() for _ in range(rng.randint(3, 40))]
    if rng.random() < 0.3:
        base += rng.choices(base, k=rng.randint(1, 10))  # duplicates stack in the plot
    with open(path, "w") as f:
        for v in base:
            if rng.random() < 0.05:
                f.write("# comment\n")
            if rng.random() < 0.03:
                f.write("\n")
            cols = [v] + [number() for _ in range(columns - 1)]
            f.write("\t".join(cols) + ("\t" if rng.random() < 0.1 else "") + "\n")

bad = 0
with tempfile.TemporaryDirectory() as d:
    for case in range(cases):
        columns = rng.choice([1, 1, 1, 3])
        files = []
        for k in range(rng.randint(1, 7)):
            p = os.path.join(d, f"set{k}")
            dataset(p, columns)
            files.append(p)
        args = []
        if rng.random() < 0.3: args.append("-s")
        if rng.random() < 0.1: args.append("-A")
        if rng.random() < 0.1: args.append("-n")
        if rng.random() < 0.5: args += ["-w", str(rng.choice([0, 2, 3, 10, 40, 60, 74, 100, 133]))]
        if rng.random() < 0.4: args += ["-c", rng.choice(["80", "90", "95", "98", "99", "99.5"])]
        if columns > 1: args += ["-C", str(rng.randint(1, 3))]
        args += [os.path.basename(f) for f in files]
        real = subprocess.run(["ministat"] + args, cwd=d, capture_output=True)
        ours = subprocess.run([tardy, "ministat"] + args, cwd=d, capture_output=True)
        if (real.stdout, real.stderr, real.returncode) != (ours.stdout, ours.stderr, ours.returncode):
            if real.returncode < 0:
                continue  # ministat crashed; tardy reports an error instead (documented)
            bad += 1
            print(f"case {case}: ministat {' '.join(args)} (exit {real.returncode} vs {ours.returncode})")
            for f in files:
                print(f"--- {os.path.basename(f)}\n" + open(f).read())
            print("--- ministat\n" + real.stdout.decode() + real.stderr.decode())
            print("--- tardy\n" + ours.stdout.decode() + ours.stderr.decode())
            if bad > 3:
                break
print(f"{cases} cases, {bad} differ")
sys.exit(1 if bad else 0)
