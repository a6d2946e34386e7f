#!/usr/bin/env bash
# The README's two-node session, run as a user would paste it: its block is
# taken from README.md, pointed at the binary under test and this work
# directory, and run whole. Every proof verifies (the block's own last
# step), and `proofline metrics` shows both nodes proving, as the README
# says they share the work.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

python3 - "$repo/README.md" >demo.sh <<'PY'
import re, sys
text = open(sys.argv[1]).read()
at = text.index("A two-node session on one machine")
block = re.search(r"```sh\n(.*?)```", text[at:], re.S).group(1)
lines = block.splitlines()
# The block's first line names the checkout and the binary; the test's stand in.
assert lines[0].startswith("REPO=$PWD; PL=$REPO/build/proofline;"), lines[0]
lines[0] = lines[0].replace("REPO=$PWD;", "REPO=$DEMO_REPO;").replace(
    "PL=$REPO/build/proofline;", "PL=$DEMO_PROOFLINE;")
lines = [l.replace("/tmp/pl-demo", "$DEMO_DIR") for l in lines]
print("set -e")
print("trap 'kill $(jobs -p) 2>/dev/null || true' EXIT")
print("\n".join(lines))
print("wait  # the demo's serves, stopped by its kill, have exited")
PY
grep -q 'metrics' demo.sh || fail "the README's two-node block runs no metrics"

# The block's coordinator takes serve's default port.
port_free() {
  python3 -c 'import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 7470))'
}
wait_until 30 port_free || fail "127.0.0.1:7470 stays in use"
DEMO_REPO=$repo DEMO_PROOFLINE=$proofline DEMO_DIR=$work/demo timeout 240 bash demo.sh >demo.log 2>&1 ||
  { sed 's/^/  | /' demo.log >&2; fail "the README's two-node session failed"; }
ok=$(grep -c '^OK' demo.log || true)
[ "$ok" -eq 5 ] || { sed 's/^/  | /' demo.log >&2; fail "verify-proofs.sh printed $ok OK lines, expected 5"; }
# metrics: a line per node, "  node-1 NAME: 1 slot(s), 0 leased, 3 proved, ..."
python3 - demo.log <<'PY' || fail "both nodes do not prove (see above)"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
proved = [int(m.group(1)) for l in lines if (m := re.search(r" slot\(s\), \d+ leased, (\d+) proved", l))]
print("proved per node:", proved)
for l in lines:
    print("  |", l)
assert len(proved) == 2, f"{len(proved)} node(s) in metrics, expected 2"
assert all(p > 0 for p in proved), f"a node proved nothing: {proved}"
assert sum(proved) == 5, f"{sum(proved)} proofs, expected 5"
PY
echo "ok: the README's two-node session splits the work and its proofs verify"
