#!/bin/bash
# Forty-fourth session, third device command (~5 min, carried build/ with build/old_lib): the
# mxfp8 forward's NaN on zero-padded document tails (forward.cu's masked-pair select).
#  (1) the new zero-tail cases of test_gpu_forward / test_gpu_backward against the library of
#      02a6d15 (build/old_lib: must fail) and the fixed one (must pass);
#  (2) dev/zero_rows/probe.c with the fixed library;
#  (3) the forward's time, old and fixed libraries alternated (dev/quantize_ab.sh, PASS=fwd);
#  (4) packed vs padded, every workload (as dev/sessions/forty-fourth_first.sh (1)).
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/forty-fourth_third.sh
set -u
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
echo "== (1) zero-tail cases: 02a6d15's library, then the fixed one"
for lib in old_lib ""; do
  for t in test_gpu_forward test_gpu_backward; do
    LD_LIBRARY_PATH=${lib:+$PWD/build/$lib:}$LD_LIBRARY_PATH FLAMIA_TEST_SEED=44 build/tests/gpu/$t >"$O/${t}_${lib:-fixed}.log" 2>&1
    echo "$t with ${lib:-the fixed library}: rc=$?"
    grep -E "zero Q K V|^FAIL" "$O/${t}_${lib:-fixed}.log" | cut -c1-260 | head -8
  done
done
echo "== (2) probe"
bash dev/zero_rows/run.sh 2>&1 | tail -14
echo "== (3) forward time, old and fixed"
PASS=fwd ROUNDS=3 VARIANTS=old=build/old_lib,fixed= WL=16x4096,16x1024,8192+224x256,logu-64k bash dev/quantize_ab.sh
echo "== (4) packed vs padded"
P=/tmp/pm; rm -rf $P; mkdir -p $P; i=0
for w in 8192+32x256 8192+224x256 logu-16k logu-64k logu:131072:32:32768:128; do
  i=$((i+1))
  /usr/bin/time -f "  $w: %e s, host peak %M KB" timeout 240 build/experiments/packed_memory --backend cuda \
    --workloads "$w" --recipes mxfp8,mxfp8-exact --out $P/$i.h5 --quiet >"$O/pm_$i.log" 2>&1
  echo "  $w rc=$?"; tail -4 "$O/pm_$i.log" | cut -c1-200
done
python3 experiments/latency/merge_h5.py "$O/packed_memory_gpu.h5" $(ls $P/*.h5 | sort -V)
rm -rf /tmp/pmt && build/experiments/h5totsv "$O/packed_memory_gpu.h5" /tmp/pmt >/dev/null &&
  python3 -c "
import csv,sys
r=list(csv.DictReader(open('/tmp/pmt/packed_memory.tsv'),delimiter='\t'))
for x in r:
  print(x['workload'],x['recipe'],x['packed_tokens'],x['padded_tokens'],'GB %.2f/%.2f held %.2f/%.2f'%tuple(float(x[k])/1e9 for k in ('packed_tensor_bytes','padded_tensor_bytes','packed_device_bytes','padded_device_bytes')),'ws %.2f/%.2f'%(float(x['packed_workspace_bytes'])/1e9,float(x['padded_workspace_bytes'])/1e9),'ms %s/%s'%(x['packed_train_ms'],x['padded_train_ms']),'oom',x['padded_out_of_memory'],'diff',[x['differing_'+o] for o in ('o','lse','dq','dk','dv')])
"
cd "$O" && tar czf logs.tgz *.log && rm -f *.log
