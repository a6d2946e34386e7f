#!/usr/bin/env bash
# Fails when an #include runs upward or in a cycle between top-level folders.
#
#   scripts/check-includes.sh [ROOT]     (default: the repository this script is in)
#
# Each folder may include itself and the folders listed for it below, which
# are everything beneath it (docs/ARCHITECTURE.md draws the graph). tests/
# may include anything and is not checked. Only `#include "folder/..."` lines
# count; system headers (<...>) are not proofline's.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}

# folder: the folders it may include (besides itself)
declare -A allowed=(
  [base]=""
  [zk]="base"
  [memory]="base"
  [witness]="zk base"
  [gpu]="zk memory base"
  [messages]="gpu witness zk memory base"
  [actors]="messages gpu witness zk memory base"
  [jobs]="messages gpu witness zk memory base"
  [observe]="actors messages gpu witness zk memory base"
  [bench]="observe jobs actors messages gpu witness zk memory base"
  [net]="actors messages gpu witness zk memory base"
  [engine]="observe jobs actors messages gpu witness zk memory base"
  [lib]="engine observe jobs actors messages gpu witness zk memory base"
  [http]="net observe jobs actors messages gpu witness zk memory base"
  [app]="http engine net bench observe jobs actors messages gpu witness zk memory base"
)

status=0
edges=""
for from in "${!allowed[@]}"; do
  [ -d "$root/$from" ] || continue
  # file:line:folder of every quoted include naming a top-level folder
  while IFS=: read -r file line to; do
    [ "$to" = "$from" ] && continue
    [ -n "${allowed[$to]+set}" ] || continue  # not a checked folder
    edges+="$from $to"$'\n'
    case " ${allowed[$from]} " in
      *" $to "*) ;;
      *) echo "${file#"$root"/}:$line: $from/ includes $to/ (allowed: ${allowed[$from]:-nothing})"
         status=1 ;;
    esac
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' "$root/$from" \
             --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.cu' --include='*.cuh' |
           sed -E 's/^([^:]+):([0-9]+):.*"([a-z_]+)\/.*/\1:\2:\3/')
done

# A cycle among the folder edges found (tsort names the folders on it); the
# table above has none, so this only fires together with a line above.
if [ -n "$edges" ] && ! loop=$(printf '%s' "$edges" | sort -u | tsort 2>&1 >/dev/null); then
  sed 's/^tsort: /include cycle: /' <<<"$loop"
  status=1
fi

if [ $status -eq 0 ]; then
  echo "includes: no upward include and no cycle between top-level folders"
fi
exit $status
