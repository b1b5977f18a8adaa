#!/usr/bin/env python3
"""Upload latency of `tardy serve` against the length of the stored history.

One suite of TESTS tests (JUnit XML, durations with 5% noise, a step of
1.5x in 2% of the tests after the first POINTS) is uploaded POINTS + 8
times to a fresh server; the latency of each upload (stored and checked for
change points, as a team's CI sees it) is printed at a few history lengths
before the step, with the same uploads to a server run with --no-detect
beside it, then the upload at which the step was alerted and the latency
of the uploads that hold it (its tests are checked exactly and alerted).

    bench/serve-history.py                      # 20,000 tests, 300 points
    TESTS=20000 POINTS=1000 bench/serve-history.py
    TARDY_TEST_POSTGRES=postgres://... bench/serve-history.py   # on PostgreSQL too

Prints: history length, median latency (s) over the uploads near it, with
and without detection.
"""
import http.client, json, os, random, secrets, shutil, socket, statistics, subprocess, sys, tempfile, time

TARDY = os.environ.get("TARDY") or os.path.join(os.path.dirname(__file__), "..", "target", "release", "tardy")
TESTS = int(os.environ.get("TESTS", 20000))
POINTS = int(os.environ.get("POINTS", 300))
STEP = POINTS


def report(i):
    rnd = random.Random(i)
    out = ['<?xml version="1.0"?><testsuites><testsuite name="s" tests="%d">' % TESTS]
    for t in range(TESTS):
        v = (0.01 + (t % 97) * 0.001) * (1 + rnd.gauss(0, 0.05))
        if i >= STEP and t < TESTS // 50:
            v *= 1.5
        out.append('<testcase classname="c%d" name="t%d" time="%.6f"/>' % (t // 100, t, v))
    out.append("</testsuite></testsuites>")
    return "\n".join(out).encode()


def start(db, extra, work):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    p = subprocess.Popen([TARDY, "serve", "--db", db, "--listen", f"127.0.0.1:{port}",
                          "--token-file", os.path.join(work, "tokens")] + extra,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    assert "listening" in line, line
    return p, port


def upload(port, token, i, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    t0 = time.perf_counter()
    c.request("POST", f"/api/v1/tests?series=suite&commit=c{i:05d}&commit_time={1700000000 + i * 3600}",
              body, {"Authorization": f"Bearer {token}", "Content-Type": "application/xml"})
    r = c.getresponse(); data = r.read(); c.close()
    dt = time.perf_counter() - t0
    if r.status not in (200, 201):
        sys.exit(f"upload {i}: HTTP {r.status} {data[:300]!r}")
    return dt, json.loads(data)


def main():
    work = tempfile.mkdtemp(prefix="tardy-serve-history-")
    token = subprocess.run([TARDY, "token", "add", "--token-file", os.path.join(work, "tokens"),
                            "--label", "bench"], capture_output=True, text=True, check=True).stdout.strip().split()[-1]
    backends = [("sqlite", lambda tag: os.path.join(work, f"{tag}.db"))]
    admin = os.environ.get("TARDY_TEST_POSTGRES")
    if admin:
        def pg(tag):
            name = f"tardy_bench_{tag}_{secrets.token_hex(4)}"
            subprocess.run(["psql", admin, "-qc", f"CREATE DATABASE {name}"], check=True)
            return admin.rsplit("/", 1)[0] + "/" + name
        backends.append(("postgres", pg))
    marks = sorted({m for m in (10, 30, 100, 300, 1000, POINTS) if m <= POINTS})
    print(f"# {TESTS} tests per upload, {POINTS + 8} uploads, 2% of tests 1.5x slower from upload {STEP + 1}")
    for backend, make in backends:
        servers = [("detect", start(make("detect"), [], work)),
                   ("no-detect", start(make("plain"), ["--no-detect"], work))]
        lat = {name: [] for name, _ in servers}
        alerted, false_alerts = None, 0
        for i in range(POINTS + 8):
            # Fresh noise at every upload: repeated bodies would make the
            # tests' histories periodic, which no suite's are.
            body = report(i)
            # Interleaved: both servers see the machine in the same state.
            for name, (_, port) in servers:
                dt, answer = upload(port, token, i, body)
                lat[name].append(dt)
                if name == "detect" and answer.get("alerts"):
                    members = sum(a["series"] for a in answer["alerts"])
                    if i < STEP:
                        false_alerts += members
                    elif alerted is None:
                        alerted = (i + 1, members)
            if (i + 1) in marks:
                k = i + 1
                near = slice(max(0, k - 5), k)
                d = statistics.median(lat["detect"][near])
                p = statistics.median(lat["no-detect"][near])
                print(f"{backend:8} history {k:5}: upload {d:6.3f} s with detection, {p:6.3f} s without"
                      f" ({d / p:4.2f}x)", flush=True)
        print(f"{backend:8} before the step: {false_alerts} tests alerted (false alerts;"
              f" FDR-controlled, so a few)")
        if alerted:
            print(f"{backend:8} the step (upload {STEP + 1}) alerted at upload {alerted[0]}"
                  f" ({alerted[0] - STEP} after), {alerted[1]} members")
        else:
            print(f"{backend:8} the step (upload {STEP + 1}) was not alerted")
        d = statistics.median(lat["detect"][STEP:])
        p = statistics.median(lat["no-detect"][STEP:])
        print(f"{backend:8} uploads holding the step: {d:6.3f} s with detection, {p:6.3f} s without"
              f" ({d / p:4.2f}x)", flush=True)
        for _, (p, _) in servers:
            p.terminate(); p.wait()
    shutil.rmtree(work, ignore_errors=True)


main()
