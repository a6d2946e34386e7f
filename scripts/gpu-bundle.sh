#!/usr/bin/env bash
# Every binary the GPU host needs, in one compressed file that fits the
# device tool's 64 MiB transfer limit (each CUDA binary holds ~19 MiB of
# device code, the same in each: xz with a dictionary larger than the
# binaries stores it about once). The host has the NVIDIA
# driver but no CAF, jemalloc, spdlog or node: binaries are built here
# (static cudart and jemalloc) and travel with their shared libraries.
#
#   scripts/gpu-bundle.sh pack BUILD_DIR [CARRY_DIR]
#       (here) strip proofline, proofline-baseline, proofline-trim-baseline,
#       cuda_gpu_test, cuda_host_test, proofline-bench, proofline-library-bench
#       and proofline-abc-bench (those built) from BUILD_DIR, add libproofline
#       (lib/, also as librapidsnark.so), their non-system shared libraries (ldd), the bundled
#       example and build-info.txt, and write CARRY_DIR/bundle.tar.xz
#       (default .carry/gpu, git-ignored).
#   scripts/gpu-bundle.sh unpack [CARRY_DIR] [DEST]
#       (GPU host) unpack into DEST (default /tmp/proofline-gpu): DEST/bin,
#       DEST/lib, DEST/examples, DEST/build-info.txt, the layout that
#       scripts/gpu-host.sh, bench-memory-gpu.sh, bench-utilization.sh and
#       gpu-pipeline.sh take as their carry folder. Prints DEST.
#
# A whole GPU session in one device call:
#   run(command="d=$(scripts/gpu-bundle.sh unpack .carry/gpu) && SKIP_BENCH=1 scripts/gpu-host.sh run $d && scripts/gpu-pipeline.sh $d",
#       carry=[".carry"])
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/carry.sh
source "$root/scripts/lib/carry.sh"
mode=${1:-}
shift || true

pack() {
  local build=${1:?usage: gpu-bundle.sh pack BUILD_DIR [CARRY_DIR]}
  local carry=${2:-$root/.carry/gpu}
  local stage
  stage=$(mktemp -d)
  trap "rm -rf '$stage'" EXIT
  mkdir -p "$stage/bin" "$stage/lib" "$stage/examples" "$carry"
  local found=0 b f
  for b in proofline proofline-baseline proofline-trim-baseline cuda_gpu_test cuda_host_test proofline-bench proofline-verify-bench proofline-library-bench proofline-abc-bench; do
    # The build's own binary first: the tree also holds the sanitizer
    # builds' (CPU only) and installed copies of the same name.
    f=$build/$b
    [ -x "$f" ] || f=$(find "$build" -maxdepth 3 -type f -name "$b" -perm -u+x \
      -not -path '*sanitize*' -not -path '*/work/*' 2>/dev/null | head -1)
    [ -n "$f" ] || continue
    carry_binary "$f" "$stage"
    found=$((found + 1))
  done
  [ "$found" -gt 0 ] || { echo "gpu-bundle.sh: no binaries under $build" >&2; exit 1; }
  # libproofline (and its name librapidsnark.so) with the libraries it needs
  local so
  so=$(find "$build/lib" -maxdepth 1 -type f -name 'libproofline.so.*' 2>/dev/null | head -1)
  if [ -n "$so" ]; then
    carry_binary "$so" "$stage"
    mv -f "$stage/bin/$(basename "$so")" "$stage/lib/"
    ln -sf "$(basename "$so")" "$stage/lib/libproofline.so.0"
    ln -sf libproofline.so.0 "$stage/lib/libproofline.so"
    ln -sf libproofline.so.0 "$stage/lib/librapidsnark.so"
  fi
  if [ -f "$stage/bin/proofline-baseline" ] && defines_allocator "$stage/bin/proofline-baseline"; then
    echo "gpu-bundle.sh: proofline-baseline defines malloc or jemalloc's API; it must not" >&2
    exit 1
  fi
  find "$root/examples" -maxdepth 1 -type f -exec cp -f {} "$stage/examples/" \;
  build_info "$root" "$build" > "$stage/build-info.txt"
  echo "gpu-bundle.sh: compressing $(du -sh "$stage" | cut -f1) (xz, a few minutes)..." >&2
  # one stream with a 192 MiB window: a binary's device code is found again
  # in the next binary (about 2 GiB of memory here, 200 MiB to unpack)
  tar -C "$stage" -cf - . | xz -9 --lzma2=dict=192MiB -T1 > "$carry/bundle.tar.xz.part"
  mv -f "$carry/bundle.tar.xz.part" "$carry/bundle.tar.xz"
  ls -l "$carry/bundle.tar.xz" >&2
  (cd "$stage" && ls bin lib) >&2
}

unpack() {
  local carry=${1:-$root/.carry/gpu}
  local dest=${2:-/tmp/proofline-gpu}
  rm -rf "$dest"
  mkdir -p "$dest"
  tar -C "$dest" -xJf "$carry/bundle.tar.xz"
  echo "$dest"
}

case "$mode" in
  pack) pack "$@" ;;
  unpack) unpack "$@" ;;
  *) sed -n '2,22p' "$0"; exit 2 ;;
esac
