# Sourced by the host benchmarks: tile_field FIELD BYTES OUT writes the field (NAME_DIMS_f32|f64.bin)
# tiled along its slowest axis to at least BYTES into OUT, and sets name, dtype, copies and tiled_dims.
tile_field() {
  local field=$1 want=$2 out=$3
  name=$(basename "$field" .bin)
  local dims=${name%_f32}; dims=${dims%_f64}; dims=${dims##*_}
  dtype=${name##*_}
  local slow=${dims%%x*} rest=${dims#*x}; [ "$rest" = "$dims" ] && rest=""
  local field_bytes; field_bytes=$(stat -c %s "$field")
  copies=$(( (want + field_bytes - 1) / field_bytes ))
  tiled_dims=$((slow * copies))${rest:+x$rest}
  python3 - "$field" "$out" "$copies" <<'PY'
import sys
src, dst, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = open(src, "rb").read()
with open(dst, "wb") as f:
    for _ in range(k): f.write(d)
PY
}
