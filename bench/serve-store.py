#!/usr/bin/env python3
"""The server's CPU per upload of a TESTS-test JUnit report (2,000), storing
only (`--no-detect`) and storing with change-point detection, read from the
server's own /proc/PID/stat around UPLOADS uploads (100) of the same suite
with fresh durations each time. With BASE=/path/to/older/tardy the older
binary's servers get the same uploads, interleaved, and the ratios print.

    bench/serve-store.py
    BASE=/tmp/old/target/release/tardy bench/serve-store.py
    TESTS=20000 UPLOADS=30 bench/serve-store.py

Prints: CPU ms per upload for each server, and new/base ratios.
"""
import http.client, os, random, socket, subprocess, sys, tempfile, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
TARDY = os.environ.get("TARDY") or os.path.join(HERE, "..", "target", "release", "tardy")
BASE = os.environ.get("BASE")
TESTS = int(os.environ.get("TESTS", 2000))
UPLOADS = int(os.environ.get("UPLOADS", 100))
TICK = os.sysconf("SC_CLK_TCK")


def report(i):
    rnd = random.Random(i)
    out = ['<?xml version="1.0"?><testsuites><testsuite name="s" tests="%d">' % TESTS]
    for t in range(TESTS):
        v = (0.01 + (t % 97) * 0.001) * (1 + rnd.gauss(0, 0.05))
        out.append('<testcase classname="com.example.c%d" name="test_%d" time="%.6f"/>' % (t // 100, t, v))
    out.append("</testsuite></testsuites>")
    return "\n".join(out).encode()


def start(binary, work, tag, extra):
    tokens = os.path.join(work, "tokens")
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    p = subprocess.Popen([binary, "serve", "--db", os.path.join(work, tag + ".db"),
                          "--listen", f"127.0.0.1:{port}", "--token-file", tokens] + extra,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    if "listening" not in line:
        sys.exit(f"bench/serve-store.py: {binary} serve did not start: {line!r}")
    return p, port


def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        x = f.read().rsplit(")", 1)[1].split()
    return (int(x[11]) + int(x[12])) / TICK


def upload(port, token, i, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    c.request("POST", f"/api/v1/tests?series=suite&commit=c{i:05d}&commit_time={1700000000 + i * 3600}",
              body, {"Authorization": f"Bearer {token}", "Content-Type": "application/xml"})
    r = c.getresponse(); r.read(); c.close()
    if r.status not in (200, 201):
        sys.exit(f"upload {i}: HTTP {r.status}")


def main():
    work = tempfile.mkdtemp(prefix="tardy-serve-store-")
    token = subprocess.run([TARDY, "token", "add", "--token-file", os.path.join(work, "tokens"),
                            "--label", "bench"], capture_output=True, text=True,
                           check=True).stdout.strip().split()[-1]
    bins = [("new", TARDY)] + ([("base", BASE)] if BASE else [])
    servers = []
    for name, binary in bins:
        for mode, extra in (("store", ["--no-detect"]), ("store+detect", [])):
            p, port = start(binary, work, f"{name}-{mode}", extra)
            servers.append([name, mode, p, port, 0.0])
    # The first upload of each (every name new) is not counted: the rest
    # are what a team's CI sends every day.
    body = report(0)
    for s in servers:
        upload(s[3], token, 0, body)
    print(f"# {UPLOADS} uploads of a {TESTS}-test JUnit report to each server, interleaved", flush=True)
    for i in range(1, UPLOADS + 1):
        body = report(i)
        for s in servers:
            c0 = cpu(s[2].pid)
            upload(s[3], token, i, body)
            s[4] += cpu(s[2].pid) - c0
    ms = {(s[0], s[1]): s[4] / UPLOADS * 1000 for s in servers}
    for (name, mode), v in ms.items():
        print(f"{name:5} {mode:13} {v:7.2f} ms of server CPU an upload")
    for name, _ in bins:
        d = ms[(name, "store+detect")] - ms[(name, "store")]
        print(f"{name:5} detection     {d:7.2f} ms an upload (the difference)")
    if BASE:
        for mode in ("store", "store+detect"):
            print(f"new/base {mode}: {ms[('new', mode)] / ms[('base', mode)]:.2f}")
    for s in servers:
        s[2].terminate(); s[2].wait()
    shutil.rmtree(work, ignore_errors=True)


main()
