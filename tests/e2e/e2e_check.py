#!/usr/bin/env python3
"""Checks of proofline's outputs against the contract of `proofline run`
(job file, result.json, proof.json / public.json), used by the e2e scripts.

Each subcommand exits 0 when the check holds and 1 with a message naming the
file and the broken expectation otherwise:

  result OUTDIR --id ID --status done|failed [--partitions N] [--single]
         [--culprit NAME]
      OUTDIR/result.json has this id and status; a done job has error null
      and N partitions 0..N-1, each done, named proof.json/public.json
      (--single) or proof_<i>.json/public_<i>.json, with spans that are
      [start, end] pairs in causal order inside the job's total span; a failed
      job has error {file, message} naming NAME, and every partition it lists
      as done has its proof and public files on disk.
  files OUTDIR NAME...        OUTDIR holds exactly these files (no temp files)
  same-json A B               A and B hold equal JSON values
  proof-format FILE CURVE     FILE is a snarkjs groth16 proof for CURVE
                              (bn128 or bls12381), affine with z = 1
  differ A B                  proofs A and B differ in pi_a, pi_b and pi_c
  overlap OUTDIR              result.json of a multi-partition job shows
                              synthesis running while earlier partitions prove
  overlap-adjacent OUTDIR     ... and synthesis of k+1 overlapping proving of k
"""

import json
import os
import sys


class CheckFailed(Exception):
    pass


def expect(cond, msg):
    if not cond:
        raise CheckFailed(msg)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise CheckFailed(f"{path}: missing")
    except json.JSONDecodeError as e:
        raise CheckFailed(f"{path}: not valid JSON ({e})")


def span(where, value):
    """A span is [start, end] in ms since the run started, start <= end."""
    expect(isinstance(value, list) and len(value) == 2
           and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value),
           f"{where}: expected [start, end] numbers, got {value!r}")
    expect(0 <= value[0] <= value[1], f"{where}: span {value} is not 0 <= start <= end")
    return value


def partition_spans(path, part):
    spans = part.get("spans_ms")
    expect(isinstance(spans, dict), f"{path}: partition {part.get('index')}: spans_ms missing")
    out = {}
    for phase in ("synthesize", "prove", "finalize"):
        expect(phase in spans, f"{path}: partition {part.get('index')}: spans_ms.{phase} missing")
        out[phase] = span(f"{path}: partition {part.get('index')} spans_ms.{phase}", spans[phase])
    return out


def check_result(args):
    outdir = args[0]
    opts = {"--partitions": None, "--single": False, "--culprit": None}
    i = 1
    while i < len(args):
        if args[i] == "--single":
            opts["--single"] = True
            i += 1
        else:
            opts[args[i]] = args[i + 1]
            i += 2
    path = os.path.join(outdir, "result.json")
    res = load(path)
    expect(res.get("id") == opts["--id"], f"{path}: id {res.get('id')!r}, expected {opts['--id']!r}")
    expect(res.get("status") == opts["--status"],
           f"{path}: status {res.get('status')!r}, expected {opts['--status']!r} (error: {res.get('error')!r})")
    expect("partitions" in res and isinstance(res["partitions"], list), f"{path}: partitions list missing")
    total = span(f"{path}: spans_ms.total", (res.get("spans_ms") or {}).get("total"))
    parts = res["partitions"]

    def names(index):
        if opts["--single"]:
            return "proof.json", "public.json"
        return f"proof_{index}.json", f"public_{index}.json"

    if opts["--status"] == "done":
        expect("error" in res and res["error"] is None, f"{path}: error is {res.get('error')!r}, expected null")
        n = int(opts["--partitions"])
        expect(len(parts) == n, f"{path}: {len(parts)} partitions listed, expected {n}")
        for k, part in enumerate(parts):
            where = f"{path}: partition {k}"
            expect(part.get("index") == k, f"{where}: index {part.get('index')!r}, expected {k}")
            expect(part.get("status") == "done", f"{where}: status {part.get('status')!r}, expected 'done'")
            proof, public = names(k)
            expect(part.get("proof") == proof, f"{where}: proof {part.get('proof')!r}, expected {proof!r}")
            expect(part.get("public") == public, f"{where}: public {part.get('public')!r}, expected {public!r}")
            expect(os.path.isfile(os.path.join(outdir, proof)), f"{where}: {proof} not written")
            expect(os.path.isfile(os.path.join(outdir, public)), f"{where}: {public} not written")
            expect(part.get("verified") is True, f"{where}: verified {part.get('verified')!r}, expected true")
            s = partition_spans(path, part)
            # Causality: a partition is synthesized, then proved, then finalized,
            # all inside the job's total span.
            expect(s["synthesize"][1] <= s["prove"][0],
                   f"{where}: proving starts at {s['prove'][0]} before synthesis ends at {s['synthesize'][1]}")
            expect(s["prove"][1] <= s["finalize"][0],
                   f"{where}: finalizing starts at {s['finalize'][0]} before proving ends at {s['prove'][1]}")
            expect(total[0] <= s["synthesize"][0] and s["finalize"][1] <= total[1],
                   f"{where}: spans {s} fall outside the job's total span {total}")
        # Partitions of one job may be proved in any order: an idle GPU worker
        # takes the one whose synthesis finished first (actors/scheduler.hpp).
    else:
        err = res.get("error")
        expect(isinstance(err, dict), f"{path}: error is {err!r}, expected an object")
        expect(isinstance(err.get("file"), str) and err["file"], f"{path}: error.file missing in {err!r}")
        expect(isinstance(err.get("message"), str) and err["message"], f"{path}: error.message missing in {err!r}")
        culprit = opts["--culprit"]
        if culprit:
            expect(culprit in err["file"] or culprit in err["message"],
                   f"{path}: error {err!r} does not name {culprit!r}")
        listed_done = set()
        for part in parts:
            if part.get("status") == "done":
                k = part.get("index")
                proof, public = names(k)
                expect(part.get("proof") == proof and part.get("public") == public,
                       f"{path}: done partition {k} lists {part.get('proof')!r}/{part.get('public')!r}")
                for f in (proof, public):
                    expect(os.path.isfile(os.path.join(outdir, f)),
                           f"{path}: partition {k} is listed done but {f} is missing")
                listed_done.add(proof)
        on_disk = {f for f in os.listdir(outdir) if f.startswith("proof")}
        expect(on_disk <= listed_done,
               f"{path}: proofs on disk {sorted(on_disk)} not listed as done partitions {sorted(listed_done)}")
    print(f"ok: {path}: {res['status']}, {len(parts)} partitions")


def check_files(args):
    outdir, want = args[0], set(args[1:])
    expect(os.path.isdir(outdir), f"{outdir}: not written")
    have = set(os.listdir(outdir))
    expect(have == want, f"{outdir}: holds {sorted(have)}, expected exactly {sorted(want)}")
    print(f"ok: {outdir}: {len(have)} files")


def check_same_json(args):
    a, b = load(args[0]), load(args[1])
    expect(a == b, f"{args[0]} differs from {args[1]}:\n{json.dumps(a)}\n{json.dumps(b)}")
    print(f"ok: {args[0]} matches {args[1]}")


def check_proof_format(args):
    path, curve = args
    p = load(path)
    expect(p.get("protocol") == "groth16", f"{path}: protocol {p.get('protocol')!r}, expected 'groth16'")
    expect(p.get("curve") == curve, f"{path}: curve {p.get('curve')!r}, expected {curve!r}")

    def dec(where, v):
        expect(isinstance(v, str) and v.isdigit() and (v == "0" or not v.startswith("0")),
               f"{path}: {where} = {v!r} is not a decimal string")

    for key in ("pi_a", "pi_c"):
        v = p.get(key)
        expect(isinstance(v, list) and len(v) == 3, f"{path}: {key} is not [x, y, z]")
        for j, x in enumerate(v):
            dec(f"{key}[{j}]", x)
        expect(v[2] == "1", f"{path}: {key} z = {v[2]!r}, expected '1' (affine)")
    b = p.get("pi_b")
    expect(isinstance(b, list) and len(b) == 3 and all(isinstance(c, list) and len(c) == 2 for c in b),
           f"{path}: pi_b is not [[x0, x1], [y0, y1], [z0, z1]]")
    for j, c in enumerate(b):
        for k, x in enumerate(c):
            dec(f"pi_b[{j}][{k}]", x)
    expect(b[2] == ["1", "0"], f"{path}: pi_b z = {b[2]!r}, expected ['1', '0'] (affine)")
    print(f"ok: {path}: groth16 proof on {curve}")


def check_differ(args):
    a, b = load(args[0]), load(args[1])
    for key in ("pi_a", "pi_b", "pi_c"):
        expect(a.get(key) != b.get(key), f"{args[0]} and {args[1]} share {key}: r and s were not fresh")
    print(f"ok: {args[0]} and {args[1]} differ")


def check_overlap(args):
    """Synthesis runs while earlier partitions prove.

    For every k the synthesis of k+1 must start before the proving of k ends
    (a serial pipeline starts it only after), and for at least one k the
    synthesis of k+1 must overlap, as intervals, the proving of some earlier
    partition j <= k; all overlaps are reported. Synthesis running further
    ahead (every synthesizer busy while the GPU proves) meets both rules.
    """
    path = os.path.join(args[0], "result.json")
    res = load(path)
    parts = res.get("partitions") or []
    expect(len(parts) >= 2, f"{path}: {len(parts)} partitions, need at least 2")
    spans = [partition_spans(path, p) for p in parts]
    overlapping = []
    for k in range(len(spans) - 1):
        syn, prv = spans[k + 1]["synthesize"], spans[k]["prove"]
        expect(syn[0] < prv[1],
               f"{path}: partition {k + 1} synthesis starts at {syn[0]} ms, after partition {k} "
               f"finished proving at {prv[1]} ms: synthesis and proving ran one after the other")
        for j in range(k + 1):
            prj = spans[j]["prove"]
            inter = min(syn[1], prj[1]) - max(syn[0], prj[0])
            if inter > 0:
                print(f"  synthesize[{k + 1}] = {syn} overlaps prove[{j}] = {prj} by {inter:.3f} ms")
                overlapping.append((k + 1, j))
    expect(overlapping, f"{path}: no partition's synthesis overlaps the proving of an earlier one")
    print(f"ok: {path}: synthesis overlaps earlier partitions' proving for (k, j) in {overlapping}")


def check_overlap_adjacent(args):
    """Synthesis of partition k+1 overlaps, as intervals, the proving of k for some k.

    What just-in-time pacing (--synthesis-ahead 1) shows: each partition is
    synthesized while the one before it proves.
    """
    path = os.path.join(args[0], "result.json")
    res = load(path)
    parts = res.get("partitions") or []
    expect(len(parts) >= 2, f"{path}: {len(parts)} partitions, need at least 2")
    spans = [partition_spans(path, p) for p in parts]
    overlapping = []
    for k in range(len(spans) - 1):
        syn, prv = spans[k + 1]["synthesize"], spans[k]["prove"]
        inter = min(syn[1], prv[1]) - max(syn[0], prv[0])
        print(f"  synthesize[{k + 1}] = {syn}, prove[{k}] = {prv}, overlap {max(inter, 0):.3f} ms")
        if inter > 0:
            overlapping.append(k)
    expect(overlapping, f"{path}: no partition's synthesis overlaps the proving of the one before it")
    print(f"ok: {path}: synthesis of k+1 overlaps proving of k for k in {overlapping}")


COMMANDS = {
    "result": check_result,
    "files": check_files,
    "same-json": check_same_json,
    "proof-format": check_proof_format,
    "differ": check_differ,
    "overlap": check_overlap,
    "overlap-adjacent": check_overlap_adjacent,
}


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        COMMANDS[sys.argv[1]](sys.argv[2:])
    except CheckFailed as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
