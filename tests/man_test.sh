#!/usr/bin/env bash
# The man page (docs/hpcz.1) against the CLI: every verb of `hpcz --help` and every long option of it
# and of each verb's --help must be in the page; groff, where installed, must format it without warnings.
# Usage: man_test.sh HPCZ MAN_PAGE
set -euo pipefail
hpcz=$1 page=$2
fail() { echo "man test: $*" >&2; exit 1; }
# The page's text: roff's \- is -, font changes go.
text=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' "$page")
help=$("$hpcz" --help 2>&1)
verbs=$(sed -nE 's/^ +hpcz ([a-z]+).*/\1/p' <<<"$help" | sort -u)
[ -n "$verbs" ] || fail "no verbs in hpcz --help"
all=$help
for v in $verbs; do
  grep -qE "(^|[^a-z])hpcz $v([^a-z]|$)|^\.B $v$" <<<"$text" || fail "verb '$v' is not in $page"
  all+=$'\n'$("$hpcz" "$v" --help 2>&1)
done
n=0
for opt in $(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$all" | sort -u); do
  grep -qE -- "$opt([^a-z0-9-]|$)" <<<"$text" || fail "option '$opt' (hpcz --help) is not in $page"
  n=$((n + 1))
done
if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1) || true
  [ -z "$warnings" ] || fail "groff: $warnings"
fi
echo "man test: $(wc -w <<<"$verbs") verbs and $n long options of the help are in $page"
