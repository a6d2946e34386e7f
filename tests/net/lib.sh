# Shared set-up of the network tests, sourced by each of them.
#
#   <script> PROOFLINE NET_PROBE FIXTURES_DIR REPO_ROOT WORK_DIR
#
# PROOFLINE is the binary under test, NET_PROBE the misbehaving CAF peer
# (net_probe.cpp), FIXTURES_DIR is tests/fixtures, REPO_ROOT holds
# scripts/verify-proofs.sh, tests/e2e/e2e_check.py and node_modules, WORK_DIR
# a scratch directory under the build tree, emptied first. Every process a
# test starts is stopped on exit, by its pid. Helpers exit 1 with a FAIL line
# on the first broken expectation.
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../support" && pwd)/lib.sh"
expect_args "PROOFLINE NET_PROBE FIXTURES_DIR REPO_ROOT WORK_DIR" 5 "$@"
proofline=$1
net_probe=$2
fixtures=$3
repo=$4
work=$5
net_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
small=$fixtures/bn254/small
medium=$fixtures/bn254/medium

fail() {
  echo "FAIL: $*" >&2
  for log in "$work"/*.err; do
    [ -f "$log" ] || continue
    echo "---- tail of $log" >&2
    tail -n 15 "$log" >&2
  done
  exit 1
}

need_executable "$proofline"
need_executable "$repo/node_modules/.bin/snarkjs" "not installed (run scripts/setup.sh)"
[ -f "$medium/circuit.zkey" ] || fail "$fixtures: no fixtures"
command -v python3 >/dev/null || fail "python3 not found"

enter_work_dir "$work" net/work
# Every serve and client of a test shares one credential directory: the
# first listening serve creates it (mutual TLS is the default on every link).
export PROOFLINE_TLS_DIR=$work/tls
# Default spool directories (<tmp>/proofline-spool-<pid>) of servers that the
# clean-up below kills with SIGKILL stay inside the work directory.
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR"

started=()
cleanup() {
  local pid
  for pid in "${started[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for pid in "${started[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

# serve NAME ARGS...: starts `proofline serve ARGS` in the background with its
# stdout in NAME.out and log in NAME.err; sets $serve_pid. With --listen,
# waits (10 s at most) for "listening on H:P" and sets $serve_port.
serve() {
  local name=$1 i
  shift
  # Made here: the background process opens them only once it runs, and the
  # loop below may look before that.
  : >"$name.out"
  : >"$name.err"
  "$proofline" serve "$@" >"$name.out" 2>"$name.err" &
  serve_pid=$!
  started+=("$serve_pid")
  serve_port=""
  case " $* " in
    *" --join "*) case " $* " in *" --listen "*) ;; *) return 0 ;; esac ;;
  esac
  for i in $(seq 100); do
    serve_port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$name.out")
    [ -n "$serve_port" ] && return 0
    kill -0 "$serve_pid" 2>/dev/null || fail "serve $* exited before listening"
    sleep 0.1
  done
  fail "serve $* did not listen within 10 s"
}

# stop_serve: SIGTERM to the serve of $serve_pid, then waits for it; fails
# unless it exits 143 (128 + SIGTERM: serve drains, then ends by the signal).
stop_serve() {
  local rc
  kill -TERM "$serve_pid"
  set +e
  wait "$serve_pid"
  rc=$?
  set -e
  [ "$rc" = 143 ] || fail "serve exited $rc after SIGTERM, expected 143"
}

# expect_rc WANT LABEL CMD...: runs CMD with its output in LABEL.log; fails
# unless it exits WANT.
expect_rc() {
  local want=$1 label=$2 rc
  shift 2
  echo "+ $*"
  set +e
  timeout 120 "$@" >"$label.log" 2>&1
  rc=$?
  set -e
  if [ "$rc" -ne "$want" ]; then
    sed 's/^/  | /' "$label.log" >&2
    fail "$* exited $rc, expected $want"
  fi
}

# log_has LABEL TEXT: LABEL.log contains TEXT.
log_has() {
  grep -qF -- "$2" "$1.log" || {
    sed 's/^/  | /' "$1.log" >&2
    fail "$1.log does not say '$2'"
  }
}

# verify VKEY DIR...: every proof under each DIR verifies with snarkjs.
verify() {
  local vkey=$1
  shift
  "$repo/scripts/verify-proofs.sh" "$vkey" "$@" >verify.log 2>&1 || {
    cat verify.log >&2
    fail "snarkjs rejected a proof under $*"
  }
}

# check SUBCOMMAND ARGS...: a contract check of tests/e2e/e2e_check.py.
check() {
  python3 "$repo/tests/e2e/e2e_check.py" "$@" || fail "check $1 ${2:-} failed (see above)"
}

# check_done OUTDIR ID N: OUTDIR/result.json says job ID is done with N
# partitions 0..N-1, each done with proof_<i>.json and public_<i>.json on disk
# (a cluster proves a job's partitions in parallel, so unlike `run` their
# order is not checked).
check_done() {
  python3 - "$@" <<'PY' || fail "check_done $* failed"
import json, os, sys
out, jid, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = json.load(open(os.path.join(out, "result.json")))
assert r["id"] == jid, f"id {r['id']!r}"
assert r["status"] == "done" and r["error"] is None, f"status {r['status']!r}, error {r['error']!r}"
parts = r["partitions"]
assert [p["index"] for p in parts] == list(range(n)), f"partitions {[p['index'] for p in parts]}"
for p in parts:
    i = p["index"]
    assert p["status"] == "done", f"partition {i}: {p['status']}"
    assert (p["proof"], p["public"]) == (f"proof_{i}.json", f"public_{i}.json"), f"partition {i}: names"
    for f in (p["proof"], p["public"]):
        assert os.path.isfile(os.path.join(out, f)), f"{f} missing"
print(f"ok: {out}/result.json: done, {n} partitions")
PY
}

# json FILE EXPR: evaluates the Python expression EXPR with j = FILE's JSON.
json() {
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

# job_file NAME ID CIRCUIT PARTS OUT [PRIORITY]: a job file with one job of
# PARTS partitions over the circuit's fixture witnesses (cycled), absolute paths.
job_file() {
  python3 - "$@" "$fixtures" <<'PY'
import json, os, sys
name, jid, circuit, parts, out = sys.argv[1:6]
prio = sys.argv[6] if len(sys.argv) > 7 else None
fixtures = sys.argv[-1]
d = os.path.join(fixtures, "bn254", circuit)
ws = sorted(f for f in os.listdir(d) if f.startswith("witness_"))
job = {"id": jid, "zkey": os.path.join(d, "circuit.zkey"),
       "witnesses": [os.path.join(d, ws[i % len(ws)]) for i in range(int(parts))],
       "out": os.path.abspath(out)}
if prio:
    job["priority"] = prio
path = name
if os.path.exists(path):
    doc = json.load(open(path))
else:
    doc = {"jobs": []}
doc["jobs"].append(job)
json.dump(doc, open(path, "w"), indent=1)
PY
}

# wait_until SECONDS CMD...: polls CMD every 0.2 s until it succeeds.
wait_until() {
  local limit=$1 i
  shift
  for i in $(seq $((limit * 5))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  return 1
}
