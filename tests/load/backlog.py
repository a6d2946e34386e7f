#!/usr/bin/env python3
"""Load test: a backlog of many small jobs under a memory budget that holds
only a few partitions at once, proved by `proofline run` on the CPU backend.

  backlog.py --proofline BIN --fixtures DIR --repo DIR --work DIR
             [--jobs N] [--partitions-in-budget K] [--rss-bound-mib M]

The job file has N jobs on the BN254 `small` fixture, every priority class
interleaved (job i has class i mod 4, so each class has its jobs spread over
the whole file) and every seventh job with two witnesses. The budget is the
fixture's proving key plus K partitions and a half (so K fit and K + 1 do
not), read from what proofline itself says a partition needs.

It fails (exit 1, naming the broken expectation) unless:
  * every job is done, with a result.json whose partitions are all done and
    verified (proofline's pairing self-check), proof and public files on disk,
    no temporary file left, and the run report's job table agrees: none lost;
  * within each priority class, jobs start proving in the job file's order,
    and complete in that order (one finalizer: with several, each has its
    own queue, and a job waiting behind a slow proof check on one is
    overtaken by jobs another finishes; docs/RELIABILITY.md); and across classes,
    a partition is never granted memory while a partition of a higher class
    queued with the memory manager before that moment still waits (both
    times from result.json's spans_ms.memory);
  * the memory manager's reservations never exceed the budget (the report's
    peak and every queue sample), and the budget was actually what held
    partitions back (some sample has partitions waiting for memory);
  * the process's peak RSS (the kernel's high-water mark of the child, and
    the report's figure) stays within the budget plus M MiB;
  * a sample of proofs (first, middle, last) verifies with snarkjs.
Figures are printed at the end, one line, for docs/RELIABILITY.md.
"""

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time

CLASSES = ["low", "normal", "high", "critical"]
RANK = {c: i for i, c in enumerate(CLASSES)}


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def parse_size(text):
    m = re.fullmatch(r"([0-9.]+) (B|KiB|MiB|GiB)", text)
    if not m:
        fail(f"cannot read the size '{text}'")
    return float(m.group(1)) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m.group(2)]


def partition_and_key_bytes(proofline, fx, work):
    """What one partition of the fixture needs beside its key, and the key:
    proofline names both when a budget is too small for one partition."""
    probe = os.path.join(work, "probe")
    os.makedirs(probe)
    jf = os.path.join(probe, "jobs.json")
    with open(jf, "w") as f:
        json.dump({"jobs": [{"id": "p", "zkey": f"{fx}/circuit.zkey",
                             "witness": f"{fx}/witness_0.wtns", "out": "out/p"}]}, f)
    r = subprocess.run([proofline, "run", "--backend", "cpu", "--memory-budget", "1K", "--quiet", jf],
                       capture_output=True, text=True)
    m = re.search(r"partition needs ([0-9.]+ \w+) beside its proving key \(([0-9.]+ \w+)\)",
                  r.stdout + r.stderr)
    if not m:
        fail(f"the probe run did not say what a partition needs:\n{r.stdout}{r.stderr}")
    return parse_size(m.group(1)), parse_size(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proofline", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--partitions-in-budget", type=int, default=4)
    ap.add_argument("--rss-bound-mib", type=int, default=64)
    ap.add_argument("--check-existing", action="store_true",
                    help="check the run already in --work instead of running again")
    a = ap.parse_args()

    if "/load/" not in a.work:
        fail(f"refusing to empty {a.work}: the work directory must lie under .../load/")
    if not a.check_existing:
        shutil.rmtree(a.work, ignore_errors=True)
    shutil.rmtree(os.path.join(a.work, "probe"), ignore_errors=True)
    os.makedirs(a.work, exist_ok=True)
    fx = os.path.join(os.path.abspath(a.fixtures), "bn254", "small")
    snarkjs = os.path.join(a.repo, "node_modules", ".bin", "snarkjs")
    if not os.access(snarkjs, os.X_OK):
        fail(f"{snarkjs}: not installed (run scripts/setup.sh)")
    if not os.access(a.proofline, os.X_OK):
        fail(f"{a.proofline}: not an executable")

    part, key = partition_and_key_bytes(a.proofline, fx, a.work)
    k = a.partitions_in_budget
    budget = int(key + (k + 0.5) * part)

    jobs = []
    for i in range(a.jobs):
        j = {"id": f"j{i:04d}", "zkey": f"{fx}/circuit.zkey", "out": f"out/j{i:04d}",
             "priority": CLASSES[i % 4]}
        if i % 7 == 3:
            j["witnesses"] = [f"{fx}/witness_{i % 4}.wtns", f"{fx}/witness_{(i + 1) % 4}.wtns"]
        else:
            j["witness"] = f"{fx}/witness_{i % 4}.wtns"
        jobs.append(j)
    jf = os.path.join(a.work, "jobs.json")
    if not a.check_existing:
        with open(jf, "w") as f:
            json.dump({"jobs": jobs}, f)
    partitions = sum(len(j.get("witnesses", [0])) for j in jobs)

    report = os.path.join(a.work, "report.json")
    # Synthesis may run far ahead, so the budget, not pacing, is what limits
    # the partitions in flight; one finalizer writes results in the order
    # the partitions were proved.
    cmd = [a.proofline, "run", "--backend", "cpu", "--memory-budget", str(budget),
           "--synthesizers", "4", "--synthesis-ahead", str(4 * k), "--finalizers", "1",
           "--report", report, "--quiet", jf]
    t0 = time.monotonic()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if a.check_existing:
        r = subprocess.CompletedProcess(cmd, 0, "", "")
    else:
        r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru.ru_utime - cpu0.ru_utime) + (ru.ru_stime - cpu0.ru_stime)
    hwm = ru.ru_maxrss * 1024  # KiB on Linux; the largest child so far (the run)
    if r.returncode != 0:
        fail(f"proofline run exited {r.returncode}:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")

    # ---- none lost
    with open(report) as f:
        rep = json.load(f)
    table = {j["id"]: j for j in rep["job_table"]}
    if len(table) != a.jobs:
        fail(f"the report lists {len(table)} jobs of {a.jobs}")
    if rep.get("proofs") != partitions:
        fail(f"the report counts {rep.get('proofs')} proofs of {partitions} partitions")
    spans = {}
    waits = []  # one per partition: its wait at the memory manager
    for j in jobs:
        out = os.path.join(a.work, j["out"])
        n = len(j.get("witnesses", [0]))
        if table[j["id"]]["status"] != "done":
            fail(f"job {j['id']}: {table[j['id']]['status']} in the report ({table[j['id']]['error']})")
        try:
            with open(os.path.join(out, "result.json")) as f:
                res = json.load(f)
        except (OSError, ValueError) as e:
            fail(f"job {j['id']}: no readable result.json ({e})")
        if res["status"] != "done" or len(res["partitions"]) != n:
            fail(f"{out}/result.json: status {res['status']}, {len(res['partitions'])} partitions of {n}")
        for p in res["partitions"]:
            if p["status"] != "done" or not p.get("verified"):
                fail(f"{out}/result.json: partition {p['index']} {p['status']}, verified {p.get('verified')}")
            for name in (p["proof"], p["public"]):
                if not os.path.isfile(os.path.join(out, name)):
                    fail(f"{out}: {name} missing")
        left = [x for x in os.listdir(out) if ".tmp" in x]
        if left:
            fail(f"{out}: temporary files left: {left}")
        spans[j["id"]] = {
            "prove_start": min(p["spans_ms"]["prove"][0] for p in res["partitions"]),
            "end": res["spans_ms"]["total"][1],
        }
        for p in res["partitions"]:
            if "memory" not in p["spans_ms"]:
                fail(f"{out}/result.json: partition {p['index']} has no spans_ms.memory")
            queued, granted = p["spans_ms"]["memory"]
            waits.append({"job": j["id"], "index": p["index"], "prio": j["priority"],
                          "queued": queued, "granted": granted})

    # ---- order
    for c in CLASSES:
        ids = [j["id"] for j in jobs if j["priority"] == c]
        starts = [spans[i]["prove_start"] for i in ids]
        for x, y, s, t in zip(ids, ids[1:], starts, starts[1:]):
            if t < s:
                fail(f"class {c}: {y} started proving ({t:.1f} ms) before {x} ({s:.1f} ms), "
                     "which is above it in the job file")
        ends = [spans[i]["end"] for i in ids]
        for x, y, s_, t in zip(ids, ids[1:], ends, ends[1:]):
            if t < s_:
                fail(f"class {c}: {y} completed ({t:.1f} ms) before {x} ({s_:.1f} ms), "
                     "which is above it in the job file")
    # Across classes: the memory manager grants in priority order among the
    # partitions queued with it at the time. The job file's jobs are queued
    # one after the other while the first ones are already granted, so a
    # lower-class partition may be granted before a higher-class one that was
    # not queued yet; never before one that was. Both times are the memory
    # manager's own clock readings (spans_ms.memory: queued, granted), so the
    # check is exact to result.json's resolution (1 us): equal times are
    # taken as undecided.
    order = sorted(waits, key=lambda w: w["granted"])
    for n, y in enumerate(order):
        for x in order[n + 1:]:
            if (RANK[x["prio"]] > RANK[y["prio"]] and x["queued"] < y["granted"]
                    and x["granted"] > y["granted"]):
                fail(f"{y['job']} partition {y['index']} ({y['prio']}) was granted memory at "
                     f"{y['granted']:.3f} ms while {x['job']} partition {x['index']} ({x['prio']}), "
                     f"queued at {x['queued']:.3f} ms, waited until {x['granted']:.3f} ms")

    # ---- memory
    mem = rep["memory"]
    if mem["budget_bytes"] != budget:
        fail(f"the report's budget {mem['budget_bytes']} is not the {budget} asked for")
    if mem["peak_reserved_bytes"] > budget:
        fail(f"peak reservation {mem['peak_reserved_bytes']} above the budget {budget}")
    over = [q for q in rep["queues"] if q["reserved_bytes"] > budget]
    if over:
        fail(f"{len(over)} queue samples reserve more than the budget {budget}, e.g. {over[0]}")
    waited = max(q["waiting_for_memory"] for q in rep["queues"])
    if waited == 0:
        fail("no sample has a partition waiting for memory: the budget held nothing back")
    if mem["peak_reserved_bytes"] < key + (k - 0.5) * part:
        fail(f"peak reservation {mem['peak_reserved_bytes']} never reached {k} partitions: "
             "something other than the budget limited the run")
    bound = budget + a.rss_bound_mib * (1 << 20)
    peak_rss = max(hwm, mem["peak_rss_bytes"])
    if peak_rss > bound:
        fail(f"peak RSS {peak_rss / 2**20:.1f} MiB above the budget plus {a.rss_bound_mib} MiB "
             f"({bound / 2**20:.1f} MiB)")

    # ---- snarkjs on a sample
    vkey = os.path.join(fx, "verification_key.json")
    sample = [jobs[0], jobs[len(jobs) // 2], jobs[-1]]
    for j in sample:
        out = os.path.join(a.work, j["out"])
        for p in (["proof.json"] if "witness" in j else ["proof_0.json", "proof_1.json"]):
            pub = p.replace("proof", "public")
            v = subprocess.run([snarkjs, "groth16", "verify", vkey, os.path.join(out, pub),
                                os.path.join(out, p)], capture_output=True, text=True)
            if v.returncode != 0 or "OK" not in v.stdout:
                fail(f"snarkjs rejects {out}/{p}: {v.stdout}{v.stderr}")

    print(f"load: {a.jobs} jobs, {partitions} partitions, all done and verified; "
          f"budget {budget / 2**10:.1f} KiB (key {key / 2**10:.1f} KiB + {k} x {part / 2**10:.1f} KiB + half); "
          f"peak reserved {mem['peak_reserved_bytes'] / 2**10:.1f} KiB; most waiting for memory {waited}; "
          f"peak RSS {hwm / 2**20:.1f} MiB (kernel), {mem['peak_rss_bytes'] / 2**20:.1f} MiB (report), "
          f"bound {bound / 2**20:.1f} MiB; "
          f"wall {wall:.1f} s, CPU {cpu:.1f} s, {partitions / wall:.1f} proofs/s")


if __name__ == "__main__":
    main()
