#!/usr/bin/env bash
# What one command's --help says of another command's options holds: every
# "`CMD --option`" a help text names is an option CMD's own --help lists.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

commands="run serve submit status cancel await metrics prove verify setup tls"
for c in $commands; do "$proofline" "$c" --help >"help_$c.txt" || fail "$c --help"; done
pattern="\b(run|serve|submit|status|cancel|await|metrics|prove|verify|setup) --[a-z][a-z-]*"
for c in $commands; do
  { grep -oE "$pattern" "help_$c.txt" || true; } | sort -u >"named_$c.txt"
  while read -r other option; do
    grep -qE -- "(^|[ ,])$option([ =,]|$)" "help_$other.txt" ||
      fail "$c --help names \`$other $option\`, which $other --help does not list"
  done <"named_$c.txt"
done
echo "PASS: help_texts"
