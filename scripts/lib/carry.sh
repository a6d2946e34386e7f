# Shared by the scripts that pack binaries for the GPU host (gpu-bundle.sh,
# gpu-host.sh, bench-memory-gpu.sh, bench-utilization.sh, bench-multigpu.sh): the host has the
# NVIDIA driver but none of CAF, jemalloc, spdlog or OpenSSL 3's Debian build,
# so binaries travel with the shared libraries they need. Source it.

# carry_binary BIN DEST: BIN, stripped of host symbols (device code stays), to
# DEST/bin, and every shared library it needs that is not part of the C/C++
# runtime or the driver to DEST/lib.
carry_binary() {
  local bin=$1 dest=$2
  mkdir -p "$dest/bin" "$dest/lib"
  cp -f "$bin" "$dest/bin/"
  strip --strip-unneeded "$dest/bin/$(basename "$bin")" 2>/dev/null || true
  ldd "$bin" | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libgcc_s.so*|libstdc++.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;;
      libcuda.so*|libnvidia*) ;;
      *) cp -fL "$lib" "$dest/lib/" ;;
    esac
  done
}

# build_info ROOT BUILD: commit (and whether the tree had changes), pack
# time, compilers and build type, one "key: value" a line.
build_info() {
  local root=$1 build=$2
  echo "commit: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$root" status --porcelain 2>/dev/null | grep -q . && echo ' + uncommitted')"
  echo "packed: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "nvcc: $(/usr/local/cuda/bin/nvcc --version 2>/dev/null | tail -1)"
  echo "cxx: $(c++ --version | head -1)"
  echo "build: $build ($(grep -m1 CMAKE_BUILD_TYPE: "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2))"
}

# defines_allocator BIN: true when BIN itself defines malloc/free or jemalloc's
# API (the glibc baselines must not; a weak undefined reference is fine).
defines_allocator() {
  nm -D --defined-only "$1" 2>/dev/null | grep -qE " (malloc|free|mallctl|mallocx)$"
}

# carry_pack NAME BUILD DEST BIN...: DEST/bin and DEST/lib emptied (nothing
# stale from an earlier pack), then each BIN of BUILD carried (carry_binary)
# and DEST/build-info.txt written. Exits 1, naming NAME, when a BIN is not
# built or a baseline (a BIN named *baseline*, which runs on glibc malloc)
# brings an allocator of its own.
carry_pack() {
  local name=$1 build=$2 dest=$3 b
  shift 3
  rm -rf "${dest:?}/bin" "${dest:?}/lib"
  mkdir -p "$dest/bin" "$dest/lib"
  for b in "$@"; do
    [ -x "$build/$b" ] || { echo "$name: $build/$b not built" >&2; exit 1; }
    if [[ $b == *baseline* ]] && defines_allocator "$build/$b"; then
      echo "$name: $b defines malloc or jemalloc's API; it must not" >&2
      exit 1
    fi
    carry_binary "$build/$b" "$dest"
  done
  build_info "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)" "$build" > "$dest/build-info.txt"
  du -sh "$dest"
}
