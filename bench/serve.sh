#!/usr/bin/env bash
# `spar serve` (docs/serve.md), four measurements, not a timed test:
#
# 1. the index and the search page with 10 000 finished runs in the database (rows inserted
#    with Python's sqlite3, each with the numbers a finished run keeps in its row): server
#    time per request over loopback, p50/p95 of N requests each (target: p95 < 50 ms);
# 2. 200 clients polling run pages over loopback (each: the run page, then its JSON every
#    2 s, as the page's script does) while a run plays: p99 latency and errors;
# 3. the server's own CPU while runs play: utime+stime of the server process (not its
#    children) from /proc/PID/stat over SECS seconds (target < 2 % of one core);
# 4. games/s of a run started by the server against the same run from the CLI at the same
#    concurrency (runs alternated, twice; target >= 98 %);
# 5. the run cache (docs/serve.md) at fishtest's scale: RUNS (50) queued matches of 200 000
#    games each whose results files a writer grows at 20 games/s each (valid rows appended
#    as a run's child appends them; the runs are the server's own, submitted through its API
#    and kept queued behind a higher-priority run that plays, so that their files are the
#    writer's alone): p50/p95 of `/`, `/api/runs` and a run page (target p95 < 50 ms); the
#    server's CPU over SECS s with 50 run-page streams and 10 index streams open (< 10 % of
#    one core) and its RSS (< 300 MB); the first index after a restart (< 5 s); the page of
#    a run of 1 000 000 games (p95 < 50 ms);
# 6. `spar submit` of a run whose registered engine needs a 60 s build (bench/serve_submit.sh;
#    target: the submit answers in < 1 s).
#
#   bench/serve.sh SPAR [SECS] [GAMES] [NODES]
#
# Defaults: 60 s of CPU, 200 games at nodes=2000, on --cores 2, RUNS=50. PARTS="1 4" runs only those
# parts (3 needs 2). The load average is printed before and after each part: on a shared
# machine say what it was.
set -euo pipefail
spar=$(realpath "$1"); here=$(dirname "$(realpath "$0")"); secs=${2:-60}; games=${3:-200}; nodes=${4:-2000}
tmp=$(mktemp -d); server=""
cleanup() {
  if [ -n "$server" ]; then kill -INT "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp"
load() { echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }
start() { # start DATA: starts a server, sets $server and $url
  "$spar" serve --bind 127.0.0.1:0 --cores 2 --data-dir "$1" >"$tmp/url.txt" 2>>"$tmp/serve.log" &
  server=$!
  for _ in $(seq 100); do grep -q http "$tmp/url.txt" 2>/dev/null && break; sleep 0.1; done
  url=$(grep -o 'http://[^/]*' "$tmp/url.txt")
}
stop() { kill -INT "$server"; wait "$server" || true; server=""; }
want() { [[ " ${PARTS:-1 2 3 4 5 6} " == *" $1 "* ]]; }

if want 1; then
echo "== 1. index and search with 10 000 finished runs"; load
start "$tmp/big"; stop
python3 - "$tmp/big/spar.db" <<'PY'
import json, random, sqlite3, sys, time
random.seed(1)
db = sqlite3.connect(sys.argv[1])
now = int(time.time())
rows = []
for i in range(10000):
    m = random.choice([40, 50, 60, 70, 80])
    words = ["--engine", "name=dev", f"option.rfp_margin={m}", "--engine", "name=base",
             "--each", "nodes=2000", "--elo0", "0", "--elo1", "5"]
    w, l, d = random.randint(100, 900), random.randint(100, 900), random.randint(200, 2000)
    live = {"games": w + l + d, "wins": w, "losses": l, "draws": d, "elo": 1.5, "elo_error": 3.2,
            "llr": 2.95, "lower": -2.94, "upper": 2.94, "verdict": random.choice(["H1", "H0"]),
            "iteration": None, "lines": [f"Games: {w+l+d}"], "shards": []}
    rows.append(("sprt", json.dumps(words), 0, 100, f"rfp {m} try {i}", "finished",
                 now - 86400, now - 86000, now - 80000, 0, "", f"/nonexistent/runs/{i}", "/",
                 json.dumps(live)))
db.executemany("INSERT INTO runs (kind, words, priority, throughput, note, state, created, "
               "started, finished, exit_code, stderr_tail, dir, cwd, last_live) "
               "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
db.commit()
print("rows:", db.execute("SELECT count(*) FROM runs").fetchone()[0])
PY
start "$tmp/big"
python3 - "$url" <<'PY'
import http.client, sys, time, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
def timings(path, n=200):
    c = http.client.HTTPConnection(u.hostname, u.port)
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        c.request("GET", path); r = c.getresponse(); body = r.read()
        out.append((time.perf_counter() - t0) * 1000)
        assert r.status == 200, (path, r.status)
    out.sort()
    return out[len(out) // 2], out[int(len(out) * 0.95)], len(body)
for path in ["/", "/search?kind=sprt&state=finished&q=rfp+60", "/search?q=try+9999",
             "/api/runs?limit=200", "/events", "/machines"]:
    p50, p95, size = timings(path)
    print(f"{path:45s} p50 {p50:6.2f} ms  p95 {p95:6.2f} ms  ({size} bytes)")
PY
stop; load
fi

if want 2; then
echo "== 2. 200 clients polling run pages while a run plays"; load
start "$tmp/poll"
match_words="--engine name=a --engine name=b --each nodes=$nodes --games 100000 --seed 1"
id=$(python3 - "$url" $match_words <<'PY'
import json, sys, urllib.request
body = json.dumps({"kind": "match", "words": sys.argv[2:]}).encode()
r = urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/api/runs", body,
                           {"Content-Type": "application/json"}))
print(json.load(r)["id"])
PY
)
sleep 3
python3 - "$url" "$id" <<'PY'
import http.client, sys, threading, time, urllib.parse
u = urllib.parse.urlparse(sys.argv[1]); rid = sys.argv[2]
lat, errors, lock = [], [0], threading.Lock()
def client(k):
    time.sleep(k * 0.01)
    try:
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    except Exception:
        with lock: errors[0] += 1
        return
    end = time.time() + 30
    first = True
    while time.time() < end:
        path = f"/runs/{rid}" if first else f"/api/runs/{rid}"
        first = False
        t0 = time.perf_counter()
        try:
            c.request("GET", path); r = c.getresponse(); r.read()
            ok = r.status == 200
        except Exception:
            ok = False
            c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        with lock:
            lat.append((time.perf_counter() - t0) * 1000)
            if not ok: errors[0] += 1
        time.sleep(2)
ts = [threading.Thread(target=client, args=(k,)) for k in range(200)]
[t.start() for t in ts]; [t.join() for t in ts]
lat.sort()
print(f"requests {len(lat)}  errors {errors[0]}  p50 {lat[len(lat)//2]:.2f} ms  "
      f"p99 {lat[int(len(lat)*0.99)]:.2f} ms  max {lat[-1]:.2f} ms")
PY
load

if want 3; then
echo "== 3. the server's own CPU while runs play ($secs s)"
cpu() { awk '{print $14 + $15}' "/proc/$server/stat"; }
c0=$(cpu); t0=$(date +%s.%N); sleep "$secs"; c1=$(cpu); t1=$(date +%s.%N)
hz=$(getconf CLK_TCK)
echo "server CPU: $(echo "($c1 - $c0) / $hz" | bc -l | cut -c1-6) s over $(echo "$t1 - $t0" | bc | cut -c1-6) s = $(echo "100 * ($c1 - $c0) / $hz / ($t1 - $t0)" | bc -l | cut -c1-5) % of one core (one run playing on 2 cores, no client)"
fi
stop; load
fi

if want 4; then
echo "== 4. games/s: a run started by the server against the same run from the CLI"
words="--engine name=a --engine name=b --each nodes=$nodes --games $games --seed 7"
served() {
  rm -rf "$tmp/speed"; start "$tmp/speed"
  python3 - "$url" $words <<'PY'
import json, sys, time, urllib.request
body = json.dumps({"kind": "match", "words": sys.argv[2:]}).encode()
t0 = time.time()
r = urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/api/runs", body,
                           {"Content-Type": "application/json"}))
rid = json.load(r)["id"]
while True:
    v = json.load(urllib.request.urlopen(f"{sys.argv[1]}/api/runs/{rid}"))
    if v["state"] in ("finished", "failed"): break
    time.sleep(0.05)
wall = time.time() - t0
print(f"served: {v['live']['games']} games in {wall:.2f} s = {v['live']['games']/wall:.3f} games/s ({v['state']})")
PY
  stop
}
local_run() {
  rm -f cli.csv cli.pgn
  t0=$(date +%s.%N)
  "$spar" match $words --concurrency 2 --results cli.csv --pgnout cli.pgn --quiet >/dev/null
  t1=$(date +%s.%N)
  echo "cli: $games games in $(echo "$t1 - $t0" | bc | cut -c1-6) s = $(echo "$games / ($t1 - $t0)" | bc -l | cut -c1-6) games/s"
}
for round in 1 2; do load; local_run; load; served; done
load
fi

if want 5; then
echo "== 5. the run cache: ${RUNS:-50} growing runs of 200 000 games, streams open, a restart"; load
start "$tmp/cache"
python3 "$here/serve_cache.py" "$url" "$spar" "${RUNS:-50}" "$secs" "$server" \
  "$tmp/cache" "$tmp" "$here/results/serve_cache.csv"
# The script restarted the server and stopped the new one.
wait "$server" 2>/dev/null || true; server=""; load
fi

if want 6; then
echo "== 6. spar submit of a run whose engine needs a 60 s build"
"$here/serve_submit.sh" "$spar" 60 3
fi
