#!/usr/bin/env bash
# `proofline run` on the bundled example with --report, --trace and --html:
# the timing log lines are there, the run report has its keys with values
# that agree with the run, the trace parses and has every lane, --json prints
# the report, a public --metrics address needs --metrics-public, and the HTML
# page, rendered by headless Chromium, has its lanes in the DOM. Exits 77
# (skipped) after the other checks when chromium is not installed.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

prove observe 0 run --backend cpu --trace trace.json --report report.json --html report.html \
  --log-level debug
log_names observe SYNTH_TIMING GPU_TIMING FIN_TIMING "read_witness_us=" "abc_us=" \
  "upload_us=" "ntt_a_us=" "msm_h_us=" "assembly_us=" "write_us=" "release_us=" \
  "purge_request_us=" "busy" "hand-off gap p50" "peak RSS" "start-up: first proving work" \
  "CPU while the backend proved"
[ -s report.json ] || fail "no report.json"
[ -s trace.json ] || fail "no trace.json"
[ -s report.html ] || fail "no report.html"

# The report: keys of docs/OBSERVABILITY.md, values consistent with the run
# (5 proofs of the bundled example, on the CPU backend, no NVML).
python3 - report.json <<'EOF' || fail "report.json does not hold the documented figures"
import json, re, sys
r = json.load(open(sys.argv[1]))
def need(cond, what):
    if not cond:
        sys.exit("report.json: " + what)
need(r["proofs"] == 5 and r["failed"] == 0, "proofs %r, failed %r" % (r["proofs"], r["failed"]))
need(r["wall_s"] > 0, "wall_s %r" % r["wall_s"])
need(abs(r["proofs_per_s"] - 5 / r["wall_s"]) < 1e-6, "proofs_per_s is not proofs / wall_s")
need(r["backend"] == "cpu", "backend %r" % r["backend"])
need(len(r["gpus"]) == 1, "gpus: %r" % r["gpus"])
g = r["gpus"][0]
need(g["device"] == 0 and g["partitions"] == 5, "gpus[0]: %r" % g)
need(0 < g["gpu_busy_fraction"] <= 1, "gpu_busy_fraction %r" % g["gpu_busy_fraction"])
need(abs(g["busy_ms"] / g["window_ms"] - g["gpu_busy_fraction"]) < 1e-9, "busy_ms / window_ms")
need(g["nvml_busy_fraction"] is None, "nvml_busy_fraction on the CPU backend")
gap = g["handoff_gap_ms"]
need(gap["count"] == 4, "4 hand-offs between 5 partitions, got %r" % gap["count"])
need(0 <= gap["p50"] <= gap["p99"] <= gap["max"], "gap percentiles out of order: %r" % gap)
need(r["nvml"]["available"] is False and r["nvml"]["reason"], "nvml: %r" % r["nvml"])
m = r["memory"]
need(m["budget_bytes"] > 0 and 0 < m["peak_reserved_bytes"] <= m["budget_bytes"], "memory: %r" % m)
need(m["peak_rss_bytes"] > 0, "peak_rss_bytes")
p = r["purge"]
need(p["count"] > 0 and p["total_ms"] >= 0 and p["threads"] == ["pl.memory"], "purge: %r" % p)
need(len(r["queues"]) > 0, "no queue samples")
need(all("t_s" in q and "ready_partitions" in q for q in r["queues"]), "queue sample keys")
need(all(a["t_s"] <= b["t_s"] for a, b in zip(r["queues"], r["queues"][1:])), "queue times")
need(all(q["cpu_s"] is not None for q in r["queues"]), "queue samples without cpu_s")
need(all(a["cpu_s"] <= b["cpu_s"] for a, b in zip(r["queues"], r["queues"][1:])), "cpu_s decreases")
c = r["cpu"]
need(c is not None and c["partitions"] == 5 and c["window_ms"] > 0 and c["cpu_ms"] > 0, "cpu: %r" % c)
need(abs(c["per_partition_ms"] * 5 - c["cpu_ms"]) < 1e-6 and abs(c["cores"] * c["window_ms"] - c["cpu_ms"]) < 1e-6,
     "cpu figures disagree: %r" % c)
need(r["stages"]["prove"]["count"] == 5, "stages: %r" % r["stages"])
s = r["startup"]
need(0 < s["first_gpu_work_ms"] <= s["first_proof_ms"] <= r["wall_s"] * 1000, "startup: %r" % s)
need(len(s["keys"]) == 1 and s["keys"][0]["path"].endswith("circuit.zkey"), "startup keys: %r" % s)
k = s["keys"][0]
for f in ("bytes", "read_ms", "to_device_ms", "tables_ms", "tables_bytes", "device_bytes"):
    need(f in k, "startup key field %s" % f)
need(k["bytes"] > 0 and k["read_ms"] > 0, "startup key: %r" % k)
need("bytes" in s["pool"] and "pin_ms" in s["pool"], "startup pool: %r" % s["pool"])
need(0 < g["gpu_busy_fraction_with_keys"] <= 1, "gpu_busy_fraction_with_keys")
need(r["job_file"].endswith("examples/jobs.json"), "job_file %r" % r["job_file"])
need(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", r["started_at"]), "started_at %r" % r["started_at"])
table = {row["id"]: row for row in r["job_table"]}
need(set(table) == {"single", "batch"}, "job_table ids %r" % sorted(table))
need(table["batch"]["status"] == "done" and table["batch"]["partitions"] == {"done": 4, "total": 4}
     and table["batch"]["error"] is None, "job_table batch %r" % table["batch"])
EOF
grep -q '<table class="jobs">' report.html || fail "report.html has no job table"
grep -q '<td>batch</td><td>done</td><td>4/4</td>' report.html || fail "report.html's job table lacks batch"
grep -q '<tr><th>job file</th><td>[^<]*examples/jobs.json</td></tr>' report.html ||
  fail "report.html does not name the job file"

# The trace: trace-event JSON with a lane per synthesizer, backend lane,
# finalizer and the purges, and every device span of every partition.
python3 - trace.json <<'EOF' || fail "trace.json is not the documented trace"
import json, sys
t = json.load(open(sys.argv[1]))
events = t["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
           if e["ph"] == "M" and e["name"] == "thread_name"}
lanes = {(procs[p], name) for (p, _), name in threads.items()}
want = {("synthesizers", "synthesizer 0"), ("synthesizers", "synthesizer 1"),
        ("CPU backend", "busy"), ("CPU backend", "lane 0 device"), ("CPU backend", "lane 0 prove()"),
        ("finalizers", "finalizer 0"), ("finalizers", "finalizer 1"), ("memory manager", "purges")}
if not want <= lanes:
    sys.exit("trace.json: missing lanes %r" % sorted(want - lanes))
spans = [e for e in events if e["ph"] == "X"]
for e in spans:
    if not (e["dur"] >= 0 and e["ts"] >= 0):
        sys.exit("trace.json: bad span %r" % e)
device = [e for e in spans if e["cat"] in ("device", "transfer")]
parts = {(e["args"]["job"], e["args"]["partition"]) for e in device}
if len(parts) != 5:
    sys.exit("trace.json: device spans of %d partitions, expected 5" % len(parts))
names = {e["name"] for e in device}
for n in ("upload", "ntt_a", "msm_a", "msm_b2", "msm_h"):
    if n not in names:
        sys.exit("trace.json: no %s span" % n)
if not any(e["cat"] == "purge" for e in spans):
    sys.exit("trace.json: no purge span")
EOF

# --json: the run report on stdout instead of the table (the log is on stderr).
echo "+ proofline run --json"
timeout 300 "$proofline" run --backend cpu --json --out-root json-out >json.out 2>json.err ||
  fail "proofline run --json failed: $(cat json.err)"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["proofs"] == 5 else 1)' \
  json.out || fail "--json did not print the run report on stdout: $(head -c 300 json.out)"

# A metrics endpoint beyond loopback is refused unless asked for explicitly.
prove metrics_public 2 run --backend cpu --metrics 0.0.0.0:0
log_names metrics_public "--metrics-public"

# The HTML page in headless Chromium: its script draws every lane.
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
  echo "SKIP: chromium not installed (scripts/setup.sh installs it); other checks passed"
  exit 77
fi
echo "+ chromium --headless --dump-dom report.html"
timeout 120 "$chrome" --headless --disable-gpu --no-sandbox --user-data-dir="$work/chromium" \
  --dump-dom "file://$work/report.html" >dom.html 2>chromium.log ||
  fail "chromium could not render report.html (see $work/chromium.log)"
python3 - dom.html <<'EOF' || fail "the rendered report.html lacks its lanes"
import re, sys
dom = open(sys.argv[1]).read()
lanes = set(re.findall(r'<g class="lane" data-group="([^"]*)" data-lane="([^"]*)"', dom))
want = {("synthesizers", "synthesizer 0"), ("CPU backend", "busy"),
        ("CPU backend", "lane 0 device"), ("finalizers", "finalizer 0"),
        ("memory manager", "purges")}
if not want <= lanes:
    sys.exit("dom.html: lanes %r, missing %r" % (sorted(lanes), sorted(want - lanes)))
if len(re.findall(r'<rect class="span cat-device"', dom)) < 5 * 5:
    sys.exit("dom.html: too few device spans drawn")
if '<svg class="util" data-group="CPU backend"' not in dom:
    sys.exit("dom.html: no utilization chart")
EOF
echo "PASS: observability"
