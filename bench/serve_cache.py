#!/usr/bin/env python3
"""Part 5 of bench/serve.sh: the run cache at fishtest's scale (see serve.sh's header).

    serve_cache.py URL SPAR RUNS SECS SERVER_PID DATA TMP OUT_CSV

URL is a fresh server's (`spar serve --cores 2`, data directory DATA, started by serve.sh as
SERVER_PID). The script submits a run that plays at priority 1 (it holds the cores) and RUNS
matches at priority 0 through the API — the server's own runs, with their rows and run
directories — which stay queued; it writes each one's results.csv (100 000 pairs of valid
rows: one file made once and copied), and one more run with 1 000 000 games. A writer thread
appends each queued run's next pairs at 20 games/s (5 pairs every half second, each row one
write, as a run's child writes them). It measures, and appends to OUT_CSV (what, value, unit,
target, runs, load average):

- p50/p95 of `/`, `/api/runs` and a run page (50 requests each, after the first look);
- the server's own CPU (utime + stime of SERVER_PID over SECS s) while the files grow and
  50 run-page streams and 10 index streams are open, and its RSS;
- the first `/` after a restart (SIGINT, a new server on DATA), then `/`'s p95 again;
- the p95 of the 1 000 000-game run's page.
"""
import http.client, json, os, random, signal, subprocess, sys, threading, time, urllib.request

url, spar, runs, secs, pid, data, tmp, out = sys.argv[1:9]
runs, secs, pid = int(runs), float(secs), int(pid)
HEAD = "pair,game,opening,seed,white,black,result,termination,plies,white_nodes,black_nodes,duration_ms\n"
rng = random.Random(5)


def pair(k):
    rows = []
    for g in (0, 1):
        w, b = ("dev", "base") if g == 0 else ("base", "dev")
        r = rng.choice(["1-0", "0-1", "1/2-1/2", "1/2-1/2"])
        t = "checkmate" if r != "1/2-1/2" else "draw_adjudication"
        rows.append(f"{k},{g},{k % 10000},{rng.getrandbits(63)},{w},{b},{r},{t},"
                    f"{rng.randint(40, 200)},{rng.randint(10**5, 10**7)},"
                    f"{rng.randint(10**5, 10**7)},{rng.randint(100, 3000)}\n")
    return rows


def post(base, body):
    req = urllib.request.Request(base + "/api/runs", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))


def load():
    return open("/proc/loadavg").read().split()[0]


results = []


def record(what, value, unit, target):
    results.append((what, f"{value:.3f}", unit, target, runs, load()))
    print(f"{what}: {value:.3f} {unit} (target {target}; load {load()})", flush=True)


def p95(base, path, n=50):
    host = base.split("//")[1]
    lat = []
    for _ in range(n + 1):
        c = http.client.HTTPConnection(host, timeout=60)
        t = time.perf_counter()
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        assert r.status == 200, (path, r.status)
        lat.append((time.perf_counter() - t) * 1000)
        c.close()
    lat = sorted(lat[1:])
    return lat[len(lat) // 2], lat[int(len(lat) * 0.95) - 1]


# The runs: one that plays (priority 1), RUNS queued matches, one of 1 000 000 games.
words = ["--engine", "name=dev", "--engine", "name=base", "--each", "nodes=2000"]
post(url, {"kind": "match", "priority": 1, "words": words + ["--games", "1000000"]})
ids, files = [], []
for i in range(runs + 1):
    v = post(url, {"kind": "match", "words": words + ["--games", "2000000", "--seed", str(i)]})
    os.makedirs(v["dir"], exist_ok=True)
    ids.append(v["id"])
    files.append(os.path.join(v["dir"], "results.csv"))
t = time.time()
base_file = os.path.join(tmp, "base.csv")
with open(base_file, "w") as f:
    f.write(HEAD)
    for k in range(100_000):
        f.writelines(pair(k))
big_file = os.path.join(tmp, "big.csv")
with open(big_file, "w") as f:
    f.write(HEAD)
    for k in range(500_000):
        f.writelines(pair(k))
for fl in files[:-1]:
    subprocess.run(["cp", base_file, fl], check=True)
subprocess.run(["cp", big_file, files[-1]], check=True)
print(f"files written in {time.time() - t:.1f} s", flush=True)
big_id, ids, files = ids[-1], ids[:-1], files[:-1]

# The writer: 5 pairs every half second per run (20 games/s each).
next_pair = [100_000] * runs
stop = threading.Event()


def writer():
    while not stop.is_set():
        t0 = time.time()
        for i, fl in enumerate(files):
            with open(fl, "a") as f:
                for k in range(next_pair[i], next_pair[i] + 5):
                    for row in pair(k):
                        f.write(row)
                        f.flush()
            next_pair[i] += 5
        stop.wait(max(0.0, 0.5 - (time.time() - t0)))


def wait_counted(base):
    # Until every queued run shows its 200 000 games (the cache has read them all).
    t0 = time.time()
    while True:
        v = json.load(urllib.request.urlopen(base + "/api/runs?state=queued&limit=500"))
        counted = [r["live"].get("games") or 0 for r in v["runs"]]
        if len(counted) >= runs and min(counted) >= 200_000:
            return time.time() - t0
        time.sleep(0.2)


print(f"all runs read in {wait_counted(url):.1f} s", flush=True)
threading.Thread(target=writer, daemon=True).start()
time.sleep(2)
for path, what in [("/", "index"), ("/api/runs", "api_runs"), (f"/runs/{ids[0]}", "run_page")]:
    p50, p = p95(url, path)
    record(f"{what}_p50", p50, "ms", "")
    record(f"{what}_p95", p, "ms", "< 50")


def streams(base, n_run, n_index):
    host = base.split("//")[1]
    socks = []

    def drain(path):
        c = http.client.HTTPConnection(host, timeout=600)
        c.request("GET", path, headers={"Accept": "text/event-stream"})
        r = c.getresponse()
        socks.append(c)
        while not stop.is_set():
            if not r.readline():
                return

    for i in range(n_run):
        threading.Thread(target=drain, args=(f"/api/runs/{ids[i % runs]}/events",), daemon=True).start()
    for _ in range(n_index):
        threading.Thread(target=drain, args=("/api/events/runs",), daemon=True).start()
    return socks


def cpu(p):
    f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def rss(p):
    for line in open(f"/proc/{p}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024


streams(url, 50, 10)
time.sleep(3)
c0, t0 = cpu(pid), time.time()
time.sleep(secs)
c1, t1 = cpu(pid), time.time()
record("server_cpu", 100 * (c1 - c0) / (t1 - t0), "% of one core", "< 10")
record("server_rss", rss(pid), "MB", "< 300")
p50, p = p95(url, f"/runs/{big_id}")
record("run_page_1m_games_p95", p, "ms", "< 50")

# A restart: the first index reads every file once.
stop.set()
os.kill(pid, signal.SIGINT)


def gone(p):
    """Whether process `p` has exited (a zombie waiting for its parent counts)."""
    try:
        return open(f"/proc/{p}/stat").read().split(")")[1].split()[0] == "Z"
    except OSError:
        return True


for _ in range(600):  # its data directory is free once it has exited
    if gone(pid):
        break
    time.sleep(0.1)
stop.clear()
log = open(os.path.join(tmp, "serve.log"), "a")
new = subprocess.Popen([spar, "serve", "--bind", "127.0.0.1:0", "--cores", "2", "--data-dir", data],
                       stdout=subprocess.PIPE, stderr=log, text=True)
t = time.perf_counter()
line = new.stdout.readline()
if "://" not in line:
    sys.exit("the restarted server printed no address: see its stderr in serve.log")
url2 = "http://" + line.split("://")[1].split("/")[0]
host = url2.split("//")[1]
c = http.client.HTTPConnection(host, timeout=120)
c.request("GET", "/")
r = c.getresponse()
r.read()
record("first_index_after_restart", time.perf_counter() - t, "s", "< 5")
p50, p = p95(url2, "/")
record("index_p95_after_restart", p, "ms", "< 50")
new.send_signal(signal.SIGINT)
new.wait(timeout=60)
write_head = not os.path.exists(out)
with open(out, "a") as f:
    if write_head:
        f.write("what,value,unit,target,runs,load1\n")
    for row in results:
        f.write(",".join(str(x) for x in row) + "\n")
