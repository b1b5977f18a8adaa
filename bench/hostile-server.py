#!/usr/bin/env python3
"""Sections 5-10 of bench/hostile.sh: what a hostile client does to `tardy serve`
and `tardy push`, each figure from this run. Run through bench/hostile.sh (which
builds tardy and makes the tokens), or alone:

    TARDY=target/release/tardy WRITE=tardy_... READ=tardy_... TOKENS=tokens bench/hostile-server.py

 5. Compressed bombs: four gzip bodies under 1 MiB at once (mocha JSON of
    1.3 M results, JUnit of 6 M results, JUnit of 4 MiB names inflating to
    800 MB, the mocha one again sent as plain XML): status, seconds, peak RSS.
 6. Slow bodies: 8 addresses x 64 connections sending bodies a byte a second to
    /login, an alert form and an upload; health probes answered from 9
    addresses; how long one slow body stays open.
 7. push: a 4 MB report with a wrong token, and to a server whose 1 MiB limit
    it passes (status shown, seconds); a push started while the server is down
    for 25 s (stored, failed attempts before).
 8. A CSV of 200,000 columns (by default, and with --max-series 200000), and
    one naming a column 5,000 times.
 9. SIGTERM while an upload is being read: seconds to exit, whether anything
    of it was stored.
10. 10,000 sign-ins with one read token: seconds, and whether another user's
    session survives.
11. Every page and API list with 10,000 and with 100,000 series (one alert
    of all 100,000): bytes and seconds; then 16 anonymous clients looping on
    the overview of 10,000 beside health probes.
12. A write-token client declaring 30 MB and sending 20 KiB/s, and a 1 KB gzip
    report sent beside it: seconds until the report is stored.
13. 32 address ranges x 64 connections trickling upload bodies: health probes
    answered from another address.
"""
import gzip, http.client, os, socket, subprocess, threading, time, urllib.request

T, W, R = os.environ["TARDY"], os.environ["WRITE"], os.environ["READ"]
TOKENS = os.environ.get("TOKENS", "tokens2")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def serve(db, *extra, port=None):
    port = port or free_port()
    p = subprocess.Popen([T, "serve", "--db", db, "--token-file", TOKENS, "--listen", f"127.0.0.1:{port}", *extra],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            break
        except Exception:
            time.sleep(0.1)
    return p, port


def hwm(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) // 1024


def post(port, path, body, ctype, token=W, timeout=600):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request("POST", path, body, {"Authorization": f"Bearer {token}", "Content-Type": ctype})
    r = c.getresponse()
    return r.status, r.read().decode(errors="replace")


def repeated(head, chunk, n):
    """gzip of head then n copies of chunk: `cat` of small .gz files, valid gzip."""
    one = gzip.compress(chunk, 9)
    return gzip.compress(head, 9) + one * n


def bombs():
    entries = b"".join(b'{"title":"t","fullTitle":"suite t%d","file":"/w/a.js","duration":1,"currentRetry":0,"err":{}},' % i
                       for i in range(200))
    mocha = repeated(b'{"stats":{"tests":1},"tests":[', entries * 440, 15)
    junit = repeated(b'<testsuite name="s">', b'<testcase classname="c" name="same" time="0.001"/>' * 100000, 60)
    names = repeated(b'<testsuite name="s">', b'<testcase classname="c" name="' + b"n" * (4 << 20) + b'" time="1"/>', 200)
    p, port = serve("sqlite:bomb.db")
    res = [None] * 4

    def send(k, body, ct):
        t = time.time()
        st, text = post(port, f"/api/v1/tests?suite=bomb{k}&commit=c1", body, ct)
        res[k] = (st, time.time() - t, len(body), text[:100])

    ths = [threading.Thread(target=send, args=a) for a in [
        (0, mocha, "application/gzip"), (1, junit, "application/gzip"),
        (2, names, "application/gzip"), (3, mocha, "application/xml")]]
    [t.start() for t in ths]
    [t.join() for t in ths]
    for k, (st, secs, n, text) in enumerate(res):
        print(f"bomb {k}: {n // 1024} KiB on the wire -> HTTP {st} in {secs:.1f} s: {text}")
    print(f"four bombs at once: server peak RSS {hwm(p.pid)} MiB")
    p.terminate()
    p.wait()


def slow_bodies():
    p, port = serve("sqlite:slow.db")
    s1 = socket.create_connection(("127.0.0.1", port))
    s1.sendall(b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
               b"Content-Length: 1000\r\n\r\nt")
    t = time.time()
    s1.settimeout(300)
    try:
        while s1.recv(4096):
            pass
    except OSError:
        pass
    print(f"one slow /login body: closed after {time.time() - t:.1f} s")
    heads = [b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 5000\r\n\r\n",
             b"POST /alert/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 5000\r\n\r\n",
             f"POST /api/v1/points HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {W}\r\nContent-Type: text/csv\r\n"
             f"Content-Length: 5000\r\n\r\ntime,x\n".encode()]
    stop = [False]

    def attacker(k):
        held, n = [], 0
        while not stop[0]:
            while len(held) < 64:
                try:
                    s = socket.socket()
                    s.bind((f"127.0.0.{k}", 0))
                    s.settimeout(1)
                    s.connect(("127.0.0.1", port))
                    n += 1
                    s.sendall(heads[n % 3])
                    held.append(s)
                except OSError:
                    break
            alive = []
            for s in held:
                try:
                    s.sendall(b"a")
                    alive.append(s)
                except OSError:
                    pass
            held = alive
            time.sleep(1)

    ths = [threading.Thread(target=attacker, args=(k,), daemon=True) for k in range(2, 10)]
    [t.start() for t in ths]
    time.sleep(3)
    ok = 0
    for i in range(80):
        try:
            s = socket.socket()
            s.bind((f"127.0.0.{1 + i % 9}", 0))
            s.settimeout(5)
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            ok += s.recv(64).startswith(b"HTTP/1.1 200")
        except OSError:
            pass
        time.sleep(0.25)
    stop[0] = True
    print(f"8 addresses x 64 slow bodies: {ok}/80 health probes answered ({100 * ok // 80}%)")
    p.terminate()
    p.wait()


def push():
    with open("big-report.xml", "w") as f:
        f.write('<testsuite name="s">' + "".join(f'<testcase classname="c" name="t{i}" time="0.001"/>' for i in range(80000))
                + "</testsuite>")
    kb = os.path.getsize("big-report.xml") // 1000
    p, port = serve("sqlite:push.db", "--max-body-mib", "1")
    for label, tok in [("wrong token", "tardy_wrong"), ("over the server's 1 MiB limit", W)]:
        t = time.time()
        r = subprocess.run([T, "push", f"http://127.0.0.1:{port}", "big-report.xml", "--commit", "x"],
                           env={**os.environ, "TARDY_TOKEN": tok}, capture_output=True, text=True)
        print(f"push of a {kb} KB report, {label}: exit {r.returncode} in {time.time() - t:.1f} s: {r.stderr.strip()[:150]}")
    p.terminate()
    p.wait()
    port = free_port()
    t = time.time()
    pu = subprocess.Popen([T, "push", f"http://127.0.0.1:{port}", "big-report.xml", "--commit", "y", "--suite", "outage"],
                          env={**os.environ, "TARDY_TOKEN": W}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(25)
    p, _ = serve("sqlite:push2.db", port=port)
    out, err = pu.communicate()
    print(f"push while the server is down 25 s: exit {pu.returncode} after {time.time() - t:.0f} s, "
          f"{err.count('failed (')} failed attempts before: {out.strip()[:100]}")
    p.terminate()
    p.wait()


def wide_csv():
    n = 200000
    wide = ("time," + ",".join(f"m{i}" for i in range(n)) + "\n1700000000," + ",".join("1" for _ in range(n)) + "\n").encode()
    for extra in [(), ("--max-series", "200000")]:
        p, port = serve("sqlite:wide.db", *extra)
        t = time.time()
        st, text = post(port, "/api/v1/points?commit=w1", wide, "text/csv")
        print(f"CSV of 200,000 columns ({len(wide) // 1000} KB) {' '.join(extra) or 'by default'}: HTTP {st} in {time.time() - t:.1f} s: {text[:110]}")
        p.terminate()
        p.wait()
    p, port = serve("sqlite:wide.db")
    dup = ("time," + ",".join("x" for _ in range(5000)) + "\n1700000000," + ",".join("1" for _ in range(5000)) + "\n").encode()
    t = time.time()
    st, text = post(port, "/api/v1/points?commit=w2", dup, "text/csv")
    print(f"CSV naming one column 5,000 times: HTTP {st} in {time.time() - t:.2f} s: {text[:120]}")
    p.terminate()
    p.wait()


def sigterm():
    p, port = serve("sqlite:term.db", "--read-budget", "3600", "--max-results", "100000000", "--max-inflated-mib", "100000")
    body = repeated(b'<testsuite name="s">', b'<testcase classname="c" name="same" time="0.001"/>' * 100000, 1000)

    def longpost():
        try:
            post(port, "/api/v1/tests?suite=long&commit=c1", body, "application/gzip")
        except Exception:
            pass

    threading.Thread(target=longpost, daemon=True).start()
    time.sleep(3)
    t = time.time()
    p.terminate()
    p.wait()
    took = time.time() - t
    p, port = serve("sqlite:term.db")
    stored = "long" in urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/series").read().decode()
    print(f"SIGTERM while a 5 GB-inflating upload is read: exited in {took:.1f} s; anything stored: {stored}")
    p.terminate()
    p.wait()


def sign_ins():
    p, port = serve("sqlite:login.db", "--read-token")

    def login(tok):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("POST", "/login", f"token={tok}", {"Content-Type": "application/x-www-form-urlencoded",
                                                      "Origin": f"http://127.0.0.1:{port}"})
        r = c.getresponse()
        r.read()
        return (r.getheader("Set-Cookie") or "").split(";")[0]

    other = login(W)
    t = time.time()
    for _ in range(10000):
        login(R)
    took = time.time() - t
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/", headers={"Cookie": other})
    r = c.getresponse()
    r.read()
    print(f"10,000 sign-ins with one read token: {took:.1f} s; another user's session still signed in: {r.status == 200}")
    p.terminate()
    p.wait()


def history_of(n, db, points=3, step=None):
    """n series of `points` points each (a 10x step at `step`, so one alert
    holds every series), imported into db."""
    with open("wide.csv", "w") as f:
        f.write("time," + ",".join(f"bench{i:06}" for i in range(n)) + "\n")
        for r in range(points):
            level = 10.0 if step is not None and r >= step else 1.0
            f.write(f"{1700000000 + r * 100}," + ",".join(f"{level + (i % 7) * 0.001:.3f}" for i in range(n)) + "\n")
    for old in (db, db + "-wal", db + "-shm"):
        if os.path.exists(old):
            os.remove(old)
    subprocess.run([T, "history", "import", "--db", db, "wide.csv"], check=True, stdout=subprocess.DEVNULL)
    if step is not None:
        subprocess.run([T, "history", "detect", "--db", db], check=True, stdout=subprocess.DEVNULL)


def timed_get(port, page):
    t = time.time()
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}{page}", timeout=60).read()
    return len(body), time.time() - t


def overview():
    # Every page and API list at 10,000 and 100,000 series (the second with
    # one alert of all 100,000): bytes and seconds.
    for n in (10000, 100000):
        history_of(n, "ov.db", points=30 if n == 100000 else 3, step=20 if n == 100000 else None)
        p, port = serve("sqlite:ov.db", "--no-detect")
        pages = ["/", f"/?page={n // 100}", "/api/v1/series", f"/api/v1/series?page={n // 1000}",
                 "/series?name=bench000042", "/api/v1/points?series=bench000042"]
        if n == 100000:
            pages += ["/api/v1/alerts", "/api/v1/alerts/1", "/api/v1/alerts/1?page=100", "/alert/1"]
        for page in pages:
            size, secs = timed_get(port, page)
            print(f"{page} with {n} series: {size / 1024:.0f} KiB in {secs:.3f} s")
        p.terminate()
        p.wait()
    history_of(10000, "ov.db")
    p, port = serve("sqlite:ov.db", "--no-detect")
    stop = False
    served = {"hit": 0, "miss": 0}

    def reader():
        while not stop:
            try:
                r = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30)
                r.read()
                kind = r.headers.get("X-Tardy-Cache", "miss")
                served[kind] = served.get(kind, 0) + 1
            except Exception:
                pass

    threads = [threading.Thread(target=reader, daemon=True) for _ in range(16)]
    for t in threads:
        t.start()
    ok = 0
    for _ in range(22):
        try:
            ok += urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).status == 200
        except Exception:
            pass
        time.sleep(0.5)
    stop = True
    print(f"16 clients looping on the overview: {ok}/22 health probes answered; "
          f"{served['hit'] + served['miss']} pages served ({served['hit']} from the cache of anonymous pages); "
          f"server peak {hwm(p.pid)} MiB")
    p.terminate()
    p.wait()


def slow_large():
    p, port = serve("sqlite:slow.db", "--no-detect")
    stop = False

    def trickle():
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall((f"POST /api/v1/points?series=slow HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {W}\r\n"
                   "Content-Type: text/csv\r\nContent-Length: 30000000\r\n\r\ntime,x\n").encode())
        while not stop:
            try:
                s.sendall(b"1" * 2048)
            except OSError:
                return
            time.sleep(0.1)

    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    time.sleep(1.5)
    report = gzip.compress(b'<testsuite><testcase name="a" time="0.1"/></testsuite>')
    start = time.time()
    status, _ = post(port, "/api/v1/tests?series=small", report, "application/gzip")
    print(f"1 KB gzip report beside a 30 MB body at 20 KiB/s: {status} in {time.time() - start:.2f} s")
    stop = True
    p.terminate()
    p.wait()


def ranges():
    p, port = serve("sqlite:ranges.db", "--no-detect")
    stop = False
    head = (f"POST /api/v1/points HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {W}\r\n"
            "Content-Type: text/csv\r\nContent-Length: 30000000\r\n\r\ntime,x\n").encode()

    def attacker(k):
        held = []
        while not stop:
            while len(held) < 64:
                try:
                    s = socket.socket()
                    s.bind((f"127.1.{10 + k}.{1 + k % 7}", 0))
                    s.connect(("127.0.0.1", port))
                    s.setblocking(False)
                    s.sendall(head)
                    held.append(s)
                except OSError:
                    break
            alive = []
            for s in held:
                try:
                    s.send(b"1")
                    alive.append(s)
                except OSError:
                    pass
            held = alive
            time.sleep(1)

    for k in range(32):
        threading.Thread(target=attacker, args=(k,), daemon=True).start()
    time.sleep(2)
    ok = 0
    for _ in range(60):
        try:
            ok += urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10).status == 200
        except Exception:
            pass
        time.sleep(0.2)
    stop = True
    print(f"32 ranges x 64 slow upload bodies: {ok}/60 health probes answered")
    p.terminate()
    p.wait()


ONLY = os.environ.get("ONLY", "")
for section in (bombs, slow_bodies, push, wide_csv, sigterm, sign_ins, overview, slow_large, ranges):
    if ONLY and section.__name__ not in ONLY.split(","):
        continue
    print(f"-- {section.__name__.replace('_', ' ')}", flush=True)
    section()
