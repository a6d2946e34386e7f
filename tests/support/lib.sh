# The prologue every shell test library shares (tests/e2e, net, setup and
# witness: each lib.sh sources this file first): strict mode, the argument
# check, fail, the checks of the tools a test needs, and the work directory.
set -euo pipefail

# expect_args USAGE COUNT ARGS...: exits 2 with "usage: SCRIPT USAGE" unless
# ARGS are COUNT words.
expect_args() {
  local usage=$1 count=$2
  shift 2
  if [ "$#" -ne "$count" ]; then
    echo "usage: $0 $usage" >&2
    exit 2
  fi
}

# fail MESSAGE...: a FAIL line, then exit 1. A library may define its own
# after sourcing this file (tests/net/lib.sh adds the tails of its logs).
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# need_executable PATH [WHY]: FAIL with "PATH: WHY" unless PATH is executable.
need_executable() {
  [ -x "$1" ] || fail "$1: ${2:-not an executable}"
}

# enter_work_dir DIR PART: empties DIR and enters it. Each library names its
# own PART of the build tree (e2e, net/work, ...) and DIR must lie under a
# folder of that name, so a wrong argument never empties anything else.
enter_work_dir() {
  local dir=$1 part=$2
  case "$dir" in
    */"$part"/*) ;;
    *) fail "refusing to empty $dir: the work directory must lie under .../$part/" ;;
  esac
  rm -rf "$dir"
  mkdir -p "$dir"
  cd "$dir"
}
