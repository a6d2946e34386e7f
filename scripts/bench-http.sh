#!/usr/bin/env bash
# The HTTP door measured (issue 29, docs/API.md): one POST /v1/prove against
# one library call on the same warm key, and CLIENTS concurrent HTTP clients
# against `proofline run` on the same partitions.
#
#   scripts/bench-http.sh DIR
#       DIR holds bin/proofline, bin/proofline-library-bench and
#       lib/libproofline.so: a carry folder from `scripts/gpu-bundle.sh
#       unpack` on the GPU host, or a build folder here (build/proofline,
#       build/proofline-library-bench, build/lib/libproofline.so are found
#       too). Needs python3 only (the clients use its standard library; no
#       curl, node or CAF install). For 2^LOG (a synthetic key, `proofline
#       setup --dev`, WITNESSES witnesses):
#         1. `proofline run` on the WITNESSES partitions (one job): proofs/s
#            from the first synthesis to the last proof (result.json spans);
#         2. `serve --http` on loopback (plain text, no token: the door's
#            own cost, not TLS's), the key preloaded; RUNS proofs one at a
#            time (median latency), RUNS bodies of the same size answered
#            404 at once (the body's transfer and parse: key=k000...), then
#            CLIENTS clients, each a process of its own, proving the
#            WITNESSES witnesses (proofs/s, from the first request to the
#            last answer);
#         3. the library (proofline-library-bench), RUNS calls one at a
#            time on a warm key (median latency).
#       Prints the overhead (HTTP median - library median - transfer) and
#       the clients' rate as a fraction of run's; snarkjs is not needed (the
#       daemon checks every proof by pairing). Writes $OUT/bench-http.txt
#       and the raw figures beside it.
#
# Environment: LOG=20 WITNESSES=64 CLIENTS=16 RUNS=10 BACKEND=cuda
#   WORK=/tmp/pl-bench-http OUT=$PWD/bench-http-out; here, at small sizes:
#   LOG=12 WITNESSES=8 CLIENTS=4 RUNS=3 BACKEND=cpu scripts/bench-http.sh build
set -euo pipefail

dir=${1:?usage: bench-http.sh DIR (a carry folder or a build folder)}
die() { echo "bench-http.sh: $*" >&2; exit 1; }
find_one() {
  local f
  for f in "$@"; do [ -e "$f" ] && { echo "$f"; return; }; done
  die "none of $* exists"
}
pl=$(find_one "$dir/bin/proofline" "$dir/proofline")
bench=$(find_one "$dir/bin/proofline-library-bench" "$dir/proofline-library-bench")
lib=$(find_one "$dir/lib/libproofline.so")
log2=${LOG:-20} n=${WITNESSES:-64} clients=${CLIENTS:-16} runs=${RUNS:-10}
backend=${BACKEND:-cuda} work=${WORK:-/tmp/pl-bench-http} out=${OUT:-$PWD/bench-http-out}
[ -d "$dir/lib" ] && export LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$work" "$out"
: > "$out/bench-http.log"
key=$work/k$log2

if [ ! -f "$key/witness_$((n - 1)).wtns" ]; then
  echo "# 2^$log2: proofline setup --dev, $n witnesses" >&2
  "$pl" setup --dev --curve bn254 --constraints $(((1 << log2) - 2)) --witnesses "$n" \
    --seed "$log2" --out "$key" --force --backend cpu --log-level warn >> "$out/bench-http.log" 2>&1
fi

# 1. run on the same partitions.
echo "# run: $n partitions" >&2
"$pl" run "$key/jobs.json" --backend "$backend" --report "$out/run.json" -q >> "$out/bench-http.log" 2>&1
cp "$key/out/result.json" "$out/run.result.json"

# 2. serve --http.
echo "# serve --http: $runs proofs one at a time, then $clients clients" >&2
srv_out=$out/serve.out srv_err=$out/serve.err
: > "$srv_out"
"$pl" serve --insecure --listen 127.0.0.1:0 --http 127.0.0.1:0 --allow-root "$key" \
  --backend "$backend" --preload "$key/circuit.zkey" --max-pending $((n + clients)) \
  --http-max-body 1G --log-level warn > "$srv_out" 2> "$srv_err" &
srv=$!
trap 'kill -9 $srv 2>/dev/null || true' EXIT
for _ in $(seq 300); do
  grep -q "http on " "$srv_out" && break
  kill -0 $srv 2>/dev/null || { cat "$srv_err" >&2; die "serve exited"; }
  sleep 0.1
done
url=$(sed -n 's/.*http on //p' "$srv_out")
[ -n "$url" ] || die "serve did not print its HTTP address"
python3 - "$url" "$key" "$n" "$clients" "$runs" > "$out/http.json" <<'PY'
import concurrent.futures, http.client, json, multiprocessing, statistics, sys, time, urllib.parse
url, key, n, clients, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
u = urllib.parse.urlsplit(url)
zkey = key + "/circuit.zkey"
bodies = [open(f"{key}/witness_{i}.wtns", "rb").read() for i in range(min(n, runs))]
def post(k, body):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=3600)
    t0 = time.perf_counter()
    c.request("POST", "/v1/prove?" + urllib.parse.urlencode({"key": k}), body=body)
    r = c.getresponse(); data = r.read(); ms = (time.perf_counter() - t0) * 1000
    c.close()
    return r.status, data, ms
for _ in range(2):  # warm-up: the key on the device, the pools
    s, d, _ = post(zkey, bodies[0])
    if s != 200: sys.exit(f"warm-up: {s} {d[:300]!r}")
one = []
for i in range(runs):
    s, d, ms = post(zkey, bodies[i % len(bodies)])
    if s != 200: sys.exit(f"prove: {s} {d[:300]!r}")
    one.append(ms)
transfer = [post("k0000000000000000", bodies[i % len(bodies)])[2] for i in range(runs)]
def client(i):  # in a client process of its own: reads its witness, proves it
    body = open(f"{key}/witness_{i}.wtns", "rb").read()
    s, d, ms = post(zkey, body)
    return s, d if s != 200 else b"", ms
# Processes, not threads: 16 threads of one Python process share its
# interpreter lock, and would measure the client's sends, not the server.
with concurrent.futures.ProcessPoolExecutor(clients, mp_context=multiprocessing.get_context("fork")) as pool:
    list(pool.map(time.sleep, [0.2] * clients))  # every client process started first
    t0 = time.perf_counter()
    answers = list(pool.map(client, range(n)))
    wall = time.perf_counter() - t0
bad = [s for s, _, _ in answers if s != 200]
if bad: sys.exit(f"{len(bad)} of {n} concurrent proofs failed: {bad[:5]}")
print(json.dumps({"one_ms": one, "one_median_ms": statistics.median(one),
                  "transfer_median_ms": statistics.median(transfer), "body_bytes": len(bodies[0]),
                  "clients": clients, "proofs": n, "wall_s": wall, "proofs_per_s": n / wall,
                  "latency_median_ms": statistics.median(ms for _, _, ms in answers)}))
PY
kill -TERM $srv; wait $srv 2>/dev/null || true
trap - EXIT

# 3. The library on the same key, one call at a time.
echo "# library: $runs calls" >&2
mkdir -p "$work/lib-proofs"
PROOFLINE_OPTIONS="{\"backend\": \"$backend\"}" "$bench" --library "$lib" --zkey "$key/circuit.zkey" \
  --witness "$key/witness_0.wtns" --threads 1 --proofs "$runs" --warmup 2 --out "$work/lib-proofs" \
  > "$out/lib.json" 2>> "$out/bench-http.log"

LOG2=$log2 python3 - "$out" <<'PY' | tee "$out/bench-http.txt"
import json, os, sys
out = sys.argv[1]
load = lambda n: json.load(open(os.path.join(out, n)))
h, l, res = load("http.json"), load("lib.json"), load("run.result.json")
parts = res["partitions"]
t0 = min(p["spans_ms"]["synthesize"][0] for p in parts)
t1 = max(p["spans_ms"]["finalize"][1] for p in parts)
run_rate = len(parts) / ((t1 - t0) / 1000)
lib = l["latency_ms"]["median"]
over = h["one_median_ms"] - lib
print(f"2^{os.environ['LOG2']}: POST /v1/prove median {h['one_median_ms']:.1f} ms, library call {lib:.1f} ms: "
      f"+{over:.1f} ms, of which the body's transfer and parse {h['transfer_median_ms']:.1f} ms "
      f"({h['body_bytes'] / 2**20:.1f} MiB); overhead beyond the transfer {over - h['transfer_median_ms']:.1f} ms")
print(f"2^{os.environ['LOG2']}: {h['clients']} HTTP clients {h['proofs_per_s']:.2f} proofs/s "
      f"({h['proofs']} proofs in {h['wall_s']:.1f} s, latency median {h['latency_median_ms']:.0f} ms); "
      f"run {run_rate:.2f} proofs/s on the same partitions: {h['proofs_per_s'] / run_rate:.3f} of run")
PY
