#!/usr/bin/env bash
# Times `proofline setup --dev` on a 2^20 domain (the benchmark size) for
# each curve, and checks the issue-4 target: under 120 s on the GPU host.
#
#   scripts/bench-setup.sh [options]
#     --proofline PATH   the binary (default: build/proofline, else proofline on PATH)
#     --log-domain K     domain 2^K (default 20); N = 2^K - P - 1 constraints
#     --public P         public inputs (default 1)
#     --witnesses K      witnesses per setup (default 4)
#     --curves "LIST"    default "bn254 bls12_381"
#     --threads T        setup threads (default 0: every hardware thread)
#     --limit S          seconds allowed per setup (default 120)
#     --verify           also prove the witnesses (`proofline run`, default
#                        backend) and check every proof with snarkjs
#     --out DIR          keep the setups in DIR/<curve> (default: a temp
#                        directory, removed at exit)
#
# Prints one line per curve (wall, user and system seconds, zkey size) and a
# PASS/FAIL verdict; exit status 0 when every setup met the limit (and, with
# --verify, every proof verified), 1 otherwise, 2 on usage errors. Needs only
# bash and coreutils (plus node_modules/.bin/snarkjs for --verify).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
proofline=""
log_domain=20
public=1
witnesses=4
curves="bn254 bls12_381"
threads=0
limit=120
verify=0
out=""

die() {
  echo "bench-setup.sh: $*" >&2
  exit 2
}

while [ "$#" -gt 0 ]; do
  case "$1" in
    --proofline) proofline=$2; shift 2 ;;
    --log-domain) log_domain=$2; shift 2 ;;
    --public) public=$2; shift 2 ;;
    --witnesses) witnesses=$2; shift 2 ;;
    --curves) curves=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --verify) verify=1; shift ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done

if [ -z "$proofline" ]; then
  if [ -x "$root/build/proofline" ]; then
    proofline=$root/build/proofline
  else
    proofline=$(command -v proofline || true)
  fi
fi
[ -n "$proofline" ] && [ -x "$proofline" ] ||
  die "no proofline binary (build it: cmake -S . -B build && cmake --build build -j --target proofline; or pass --proofline PATH)"
constraints=$(( (1 << log_domain) - public - 1 ))
[ "$constraints" -ge 1 ] || die "--log-domain $log_domain is too small for --public $public"

if [ -n "$out" ]; then
  mkdir -p "$out"
  work=$(cd "$out" && pwd)
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/proofline-bench-setup-XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi

echo "proofline: $proofline ($("$proofline" --version 2>/dev/null || echo unknown version))"
echo "host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //')"
echo "setup: domain 2^$log_domain, $constraints constraints, $public public, $witnesses witnesses, threads $threads"
echo "work: $work"
echo

status=0
TIMEFORMAT='%R %U %S'
for curve in $curves; do
  dir=$work/$curve
  rm -rf "$dir"
  log=$work/setup-$curve.log
  set +e
  times=$( { time "$proofline" setup --dev --curve "$curve" --constraints "$constraints" \
      --public "$public" --witnesses "$witnesses" --threads "$threads" --seed 1 \
      --out "$dir" >"$log" 2>&1; } 2>&1 )
  rc=$?
  set -e
  if [ "$rc" -ne 0 ]; then
    sed 's/^/  | /' "$log" >&2
    echo "FAIL  $curve: proofline setup exited $rc"
    status=1
    continue
  fi
  read -r wall user sys <<<"$times"
  zkey_mib=$(( $(stat -c %s "$dir/circuit.zkey") >> 20 ))
  verdict=PASS
  if awk -v w="$wall" -v l="$limit" 'BEGIN { exit !(w > l) }'; then
    verdict=FAIL
    status=1
  fi
  printf '%-4s  %-9s  domain 2^%s  wall %7.2f s  user %7.2f s  sys %6.2f s  zkey %5s MiB  (limit %s s)\n' \
    "$verdict" "$curve" "$log_domain" "$wall" "$user" "$sys" "$zkey_mib" "$limit"
  # The setup's own step timings (key: window tables, A points, ..., write).
  grep -E "key:|wrote|circuit:" "$log" | sed 's/^\[[^]]*\] \[[^]]*\] /      /'

  if [ "$verify" -eq 1 ]; then
    if "$proofline" run "$dir/jobs.json" >"$work/run-$curve.log" 2>&1 &&
       "$root/scripts/verify-proofs.sh" "$dir/verification_key.json" "$dir/out" >"$work/verify-$curve.log" 2>&1; then
      echo "      verify: $(tail -n 1 "$work/verify-$curve.log")"
    else
      tail -n 20 "$work/run-$curve.log" "$work/verify-$curve.log" 2>/dev/null | sed 's/^/  | /' >&2
      echo "FAIL  $curve: proving or verification failed"
      status=1
    fi
  fi
done
exit "$status"
