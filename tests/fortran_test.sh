#!/usr/bin/env bash
# The Fortran test program, then its f32 archive against the CLI's of the same field: a Fortran array
# a(128, 64, 100) is hpcz's 100x64x128, so the bytes must be the same.
# usage: fortran_test.sh FORTRAN_TEST HPCZ_CLI FIELD   (FIELD: the bundled 100x64x128 f32 field)
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$1" "$3" "$tmp/fortran.hpcz"
"$2" compress "$3" -t f32 -d 100x64x128 --rel 1e-3 -o "$tmp/cli.hpcz"
cmp "$tmp/fortran.hpcz" "$tmp/cli.hpcz"
echo "fortran_test.sh: the Fortran module's archive is the CLI's, byte for byte"
