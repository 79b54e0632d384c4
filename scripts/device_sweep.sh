#!/usr/bin/env bash
# One device call: every baseline's correctness (no timing) at the sizes not yet checked on the H200, side by side.
# Usage (from the repo root, on the device, with .whl and .devsite carried): COMMIT=<sha> OUT=<dir> bash scripts/device_sweep.sh
set -u
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl $(ls .whl-ray/*.whl 2>/dev/null) >/tmp/pip.log 2>&1 || tail -5 /tmp/pip.log
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
export CUDAMASTER_GIT_COMMIT=${COMMIT:-unknown}
export CUDAMASTER_HARNESS__DATA_WORKERS=3
. scripts/device_bwrap.sh
{ nvidia-smi --query-gpu=name,driver_version --format=csv; date -u; } > "$OUT/env.txt"
LIMIT=${LIMIT:-540}
PAPER="spmm_csr spmm_ell spmv_coo spmv_csc spmv_csr spmv_ell square_matrix_mul stencil_2d stencil_3d top_k triangle_attention vector_add FFT"
targs=""; for t in $PAPER; do targs="$targs --task $t"; done
pids=()
for i in 0 1; do
  timeout -k 5 $LIMIT python3 scripts/check_baselines.py --sizes paper $targs --shard $i/2 --output "$OUT/paper_$i.json" > "$OUT/paper_$i.log" 2>&1 & pids+=($!)
done
for i in 0 1 2; do
  timeout -k 5 $LIMIT python3 scripts/check_baselines.py --sizes large --shard $i/3 --output "$OUT/large_$i.json" > "$OUT/large_$i.log" 2>&1 & pids+=($!)
  timeout -k 5 $LIMIT python3 scripts/check_baselines.py --sizes edge --shard $i/3 --output "$OUT/edge_$i.json" > "$OUT/edge_$i.log" 2>&1 & pids+=($!)
done
wait
echo "setup+sweep $(( $(date +%s) - T0 )) s"
for f in "$OUT"/*.log; do echo "== $f: $(grep -c ' ok ' $f) ok lines, $(wc -l < $f) lines"; grep -v " ok " "$f" | tail -4; done
df -h /tmp | tail -1; free -g | head -2
