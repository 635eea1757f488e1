#!/usr/bin/env bash
# The main job on the embedded default: every backend and its devices, the
# plan for each, then `zlcore run` of one operator of the example suite on the
# host CPU, which prints its results table.
set -euo pipefail
zlcore=${1:?usage: demo.sh <path to zlcore>}
root=$(cd "$(dirname "$0")/.." && pwd)

echo "== zlcore backends"
"$zlcore" backends
for b in $("$zlcore" backends --json | /usr/bin/python3 -c 'import json,sys; print(" ".join(b["name"] for b in json.load(sys.stdin)["backends"]))'); do
  echo
  echo "== zlcore devices --backend $b"
  "$zlcore" devices --backend "$b"
  echo "== zlcore plan --backend $b"
  "$zlcore" plan --backend "$b" | sed -n '1,3p'
done

out=$root/runs/demo-$(date +%Y%m%d-%H%M%S)
echo
echo "== zlcore run --backend host --op abs (example suite)"
"$zlcore" run --backend host --flaggems-dir "$root/examples/suite" --op abs --dtypes float32 \
  --python /usr/bin/python3 --out "$out"

echo
echo "zlcore is installed in $(dirname "$zlcore"); to run it by name:"
echo "  export PATH=$(dirname "$zlcore"):\$PATH"
