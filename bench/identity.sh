#!/usr/bin/env bash
# Archive identity between two hpcz builds: every field of DATA (MANIFEST.tsv) in every mode, at
# rel 1e-2/1e-3/1e-4 and one abs bound, with and without the lossless stage (levitus also with its
# fill value), compressed by each binary on DEVICE; prints one line per case and a summary, exit 1 on
# any difference. usage: bench/identity.sh BASE_BIN NEW_BIN [DATA_DIR] [DEVICE=cpu|gpu]
set -u
base=$1 new=$2 data=${3:-../shared/data} dev=${4:-cpu}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
same=0 diff=0
while IFS=$'\t' read -r file _ _ _ dims dtype _ _ _ _ notes; do
  [ "$file" = file ] && continue
  [ -f "$data/$file" ] || continue
  fills=("")
  case $notes in *"fill/missing value "*) v=${notes#*fill/missing value }; fills+=("--fill ${v%% *}");; esac
  for mode in fast ratio interp; do
    for b in "--rel 1e-2" "--rel 1e-3" "--rel 1e-4" "--abs 0.01"; do
      for extra in "" "--lossless" "${fills[@]:1}"; do
        for side in base new; do
          bin=$base; [ $side = new ] && bin=$new
          rm -f "$tmp/$side"  # builds that keep an existing output (-f) and builds from before that
          "$bin" compress -i "$data/$file" -o "$tmp/$side" -t "$dtype" -d "$dims" $b --mode $mode --device "$dev" $extra \
            >/dev/null 2>"$tmp/$side.err" || echo "compress failed ($side): $(cat "$tmp/$side.err")" >"$tmp/$side"
        done
        if cmp -s "$tmp/base" "$tmp/new"; then same=$((same + 1)); else
          diff=$((diff + 1)); echo "DIFF $file $mode $b $extra"; fi
      done
    done
  done
done <"$data/MANIFEST.tsv"
echo "identity ($dev): $same identical, $diff different"
[ $diff -eq 0 ]
