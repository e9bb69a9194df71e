#!/bin/bash
# Fifteenth session (~6 min): the training call's quantize writes Q^T and K^T (the backward's
# bwd_transpose pass skipped) and the mxfp8 quantizer's transposes go through 4 x 4 byte
# permutes and 16-byte stores (V^T always, Q^T / K^T in the training call). Correctness first:
# test_gpu_quantize (Q^T / K^T / V^T of a poisoned train step byte for byte against the host
# layout), test_gpu_api (train_step against quantize + forward + backward called apart: O, lse,
# dK, dV bit-identical), test_gpu_backward, test_gpu_leak; then three configurations of one
# latency driver, alternated, two rounds: the library before (LD_LIBRARY_PATH=build/headlib),
# this tree's with FLAMIA_SM90_QKT=bwd ("off": bwd_transpose, but the new V^T stores) and its
# default ("on"); last memcheck / racecheck on test_gpu_quantize's small cases.
# Carry: build (this tree, built here) and build/headlib/libflamia.so (a9a99e6).
# Usage (device, repo root): bash dev/fifteenth_qkt.sh > $OUT/qkt.log 2>&1
export OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
B=build L=build/experiments/latency/latency H=$PWD/build/headlib P=/tmp/qkt
mkdir -p $P
ldd $L build/headlib/libflamia.so | grep "not found"
for t in test_gpu_quantize test_gpu_api test_gpu_backward test_gpu_leak; do
  timeout 200 $B/tests/gpu/$t > $P/$t.log 2>&1
  echo "$t: rc=$?"; grep -E "train_step|train step|leak|FAIL|fail|differs|all bit-exact" $P/$t.log | head -12
done
run() { # config workload round
  local args="--workloads $2 --recipes mxfp8,mxfp8-exact --passes quant,train --pass-budget 2 --out $P/$1-$2-$3.h5"
  case $1 in
    head) LD_LIBRARY_PATH=$H:$LD_LIBRARY_PATH timeout 150 $L $args ;;
    off) FLAMIA_SM90_QKT=bwd timeout 150 $L $args ;;
    on) timeout 150 $L $args ;;
  esac >> $P/latency.log 2>&1 || echo "latency $1 $2 $3 FAILED"
}
summary() {
python3 - $P <<'PY'
import sys, glob, h5py, collections
d = collections.defaultdict(list)
for fn in sorted(glob.glob(sys.argv[1] + "/*.h5")):
    base = fn.split("/")[-1][:-3]; c = base.split("-")[0]; r = base.split("-")[-1]; w = base[len(c) + 1:-len(r) - 1]
    f = h5py.File(fn, "r"); t = f["timings"]; v = f["verify"]
    for j in range(t["pass"].shape[0]):
        d[(w, t["system"][j].decode(), t["pass"][j].decode(), c)].append(float(t["ms"][j]))
    d[(w, "verify", c)].append("ok" if all(v["ok"][...]) else "FAIL")
print("| workload | system | pass | HEAD ms | off ms | on ms | off / HEAD | on / HEAD |")
print("|---|---|---|---|---|---|---|---|")
for w in ["16x4096", "64x1024", "logu-16k"]:
    for s in ["flamia-mxfp8", "flamia-mxfp8-exact"]:
        for p in ["quant", "train"]:
            m = {c: sum(d[(w, s, p, c)]) / len(d[(w, s, p, c)]) if d[(w, s, p, c)] else float("nan") for c in ["head", "off", "on"]}
            print("| %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f |" % (w, s, p, m["head"], m["off"], m["on"], m["off"] / m["head"], m["on"] / m["head"]))
    print("  verify:", {c: d[(w, "verify", c)] for c in ["head", "off", "on"]})
PY
}
WL="16x4096 64x1024 logu-16k"
for r in 1 2; do
  for w in $WL; do
    for c in head off on; do run $c $w $r; done
  done
  echo "== after round $r ($SECONDS s)"; summary
done
grep -E "VERIFY|FAIL|error" $P/latency.log | head
for tool in memcheck racecheck; do # the new transposes under the sanitizers (small cases)
  FLAMIA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/gpu/test_gpu_quantize > $P/san-$tool.log 2>&1
  echo "compute-sanitizer $tool test_gpu_quantize: rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $P/san-$tool.log | sort | uniq -c
done
cp $P/*.log ${OUT:-/tmp}/ 2>/dev/null
