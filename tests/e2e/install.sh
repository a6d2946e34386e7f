#!/usr/bin/env bash
# `cmake --install` into a scratch prefix: the binary (its --version names
# the commit and CUDA), the library (built with the installed pkg-config
# file, proving the bundled example), the bundled example, the docs, the default serve
# config (valid for `serve --config`) and the systemd unit, which names the
# installed binary and config and passes `systemd-analyze verify`. Exits 77
# (skipped) after the other checks where systemd-analyze is missing.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

build=$(cd "$(dirname "$proofline")" && pwd)
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >install.log 2>&1 || { cat install.log >&2; fail "cmake --install failed"; }
for f in bin/proofline share/proofline/examples/jobs.json share/doc/proofline/README.md \
  share/doc/proofline/docs/OBSERVABILITY.md etc/proofline/serve.json lib/systemd/system/proofline.service; do
  [ -e "$prefix/$f" ] || fail "cmake --install left no $f"
done
# The library: header, shared and static library, rapidsnark's name, and a
# pkg-config file a C program builds with.
libdir=$(cd "$prefix" && ls -d lib/x86_64-linux-gnu 2>/dev/null || echo lib)
for f in include/proofline/proofline.h include/proofline/rapidsnark/prover.h \
  include/proofline/rapidsnark/verifier.h "$libdir/libproofline.so" "$libdir/libproofline.a" \
  "$libdir/librapidsnark.so" "$libdir/pkgconfig/proofline.pc"; do
  [ -e "$prefix/$f" ] || fail "cmake --install left no $f"
done
PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig cc -o prove_example "$repo/examples/c/prove.c" \
  $(PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig pkg-config --cflags --libs proofline) ||
  fail "examples/c/prove.c does not build with the installed pkg-config file"
PROOFLINE_OPTIONS='{"backend": "cpu", "cpu-threads": 2}' LD_LIBRARY_PATH=$prefix/$libdir \
  ./prove_example "$repo/examples/circuit.zkey" "$repo/examples/witness_0.wtns" >example.out ||
  fail "the example failed against the installed library"
"$repo/scripts/verify-proofs.sh" "$repo/examples/verification_key.json" . >/dev/null ||
  fail "snarkjs rejected the installed library's proof"

"$prefix/bin/proofline" --version >version.log || fail "the installed proofline --version failed"
log_names version "proofline " "commit: " "CUDA: " "curves: BN254, BLS12-381" "CAF: 0.17"
unit=$prefix/lib/systemd/system/proofline.service
grep -q "^ExecStart=$prefix/bin/proofline serve --config $prefix/etc/proofline/serve.json " "$unit" ||
  fail "the unit does not start the installed binary with the installed config: $(grep ExecStart "$unit")"
for hardening in DynamicUser=yes NoNewPrivileges=yes StateDirectory=proofline ProtectSystem=strict; do
  grep -qx "$hardening" "$unit" || fail "the unit lacks $hardening"
done
# The installed config is one serve accepts: --help after it parses it.
"$prefix/bin/proofline" serve --config "$prefix/etc/proofline/serve.json" --help >/dev/null ||
  fail "serve --config rejects the installed serve.json"

# The installed binary as the unit runs it: serve with a config file and
# JSON logs; /healthz and /readyz answer on the metrics port; SIGTERM stops it.
cat >serve.json <<JSON
{"listen": "127.0.0.1:0", "metrics": "127.0.0.1:0", "backend": "cpu", "log-format": "json",
 "allow-root": ["$work"]}
JSON
PROOFLINE_TLS_DIR=$work/tls "$prefix/bin/proofline" serve --config serve.json 2>serve.err &
serve_pid=$!
url=
for _ in $(seq 200); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' serve.err | head -1 || true)
  [ -n "$url" ] && break
  kill -0 "$serve_pid" 2>/dev/null || { cat serve.err >&2; fail "serve --config ended at start"; }
  sleep 0.1
done
[ -n "$url" ] || { kill "$serve_pid"; fail "serve logged no metrics address"; }
python3 - "${url%/metrics}" serve.err <<'PY' || { kill "$serve_pid"; fail "probes or JSON log lines are wrong"; }
import json, re, sys, urllib.request
base, log = sys.argv[1], sys.argv[2]
assert urllib.request.urlopen(base + "/healthz", timeout=10).read() == b"ok\n"
assert urllib.request.urlopen(base + "/readyz", timeout=10).read() == b"ready\n"
lines = [l for l in open(log) if l.strip()]
assert lines, "no JSON log line"
for l in lines:
    assert l.startswith("{"), f"a stderr line that is not JSON: {l!r}"
for l in lines:
    j = json.loads(l)
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", j["time"]), j
    assert j["level"] and j["msg"], j
assert any("listening on 127.0.0.1:" in json.loads(l)["msg"] for l in lines)
PY
kill -TERM "$serve_pid"
serve_rc=0
wait "$serve_pid" || serve_rc=$?
[ "$serve_rc" -eq 143 ] || fail "serve exited $serve_rc on SIGTERM, expected 143 (a drained stop)"

# With JSON logs the errors that end a command are JSON lines too (a
# supervisor parses stderr): serve that cannot listen, run without its file.
all_json() {  # file what: every line of file is a JSON object, one at level error naming what
  python3 - "$1" "$2" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
objs = [json.loads(l) for l in lines]
assert any(o["level"] == "error" and sys.argv[2] in o["msg"] for o in objs), objs
PY
}
rc=0
"$prefix/bin/proofline" serve --insecure --listen 192.0.2.1:7470 --backend cpu --log-format json \
  >/dev/null 2>bad-listen.err || rc=$?
[ "$rc" -eq 2 ] || fail "serve on a foreign address exited $rc, expected 2"
all_json bad-listen.err "cannot listen on 192.0.2.1:7470" || fail "serve's fatal error is not a JSON line: $(cat bad-listen.err)"
rc=0
"$prefix/bin/proofline" run missing-jobs.json --log-format json 2>missing.err || rc=$?
[ "$rc" -eq 2 ] || fail "run of a missing job file exited $rc, expected 2"
all_json missing.err "missing-jobs.json" || fail "run's error is not a JSON line: $(cat missing.err)"

if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze not installed; the other install checks passed"
  exit 77
fi
# verify checks the unit's syntax, every directive and that ExecStart's
# binary exists and is executable.
if ! systemd-analyze verify "$unit" >verify.log 2>&1; then
  sed 's/^/  | /' verify.log >&2
  fail "systemd-analyze verify rejects $unit"
fi
! grep -q "proofline.service" verify.log || { sed 's/^/  | /' verify.log >&2; fail "systemd-analyze verify warns about the unit"; }
echo "PASS: install"
