#!/bin/bash
# Fifteenth session, second run (~4 min). The first (dev/fifteenth_qkt.sh) measured the
# quantizer's transposes by 4 x 4 byte permutes with each lane storing 16 bytes to its own row
# (32 half sectors per store): mxfp8 quantize 0.441 -> 0.501 ms at 16x4096, and Q^T / K^T in
# it cost more than bwd_transpose. Here: lane pairs storing whole 32-byte sectors
# (FLAMIA_QUANT_TR_PAIRS=1, this tree) against the byte-wise tile extended to Q and K
# (FLAMIA_QUANT_TR_PAIRS=0, build/bytelib) and the library before (build/headlib, a9a99e6);
# "off" = FLAMIA_SM90_QKT=bwd. Correctness of both builds first (test_gpu_quantize: a train
# step's Q^T / K^T / V^T byte for byte; test_gpu_api: train_step against the parts).
# Carry: build (with build/headlib, build/bytelib). Usage: bash dev/fifteenth_qkt2.sh > $OUT/qkt2.log 2>&1
export OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
B=build L=build/experiments/latency/latency P=/tmp/qkt2
mkdir -p $P
for lib in default bytelib; do
  for t in test_gpu_quantize test_gpu_api; do
    if [ $lib = default ]; then timeout 200 $B/tests/gpu/$t > $P/$t-$lib.log 2>&1
    else LD_LIBRARY_PATH=$PWD/build/bytelib:$LD_LIBRARY_PATH timeout 200 $B/tests/gpu/$t > $P/$t-$lib.log 2>&1; fi
    echo "$t ($lib): rc=$?"; grep -E "^train_step|differs|FAIL|all bit-exact" $P/$t-$lib.log | head -6
  done
done
run() { # config workload round
  local args="--workloads $2 --recipes mxfp8 --passes quant,train --pass-budget 2 --out $P/$1-$2-$3.h5"
  case $1 in
    head) LD_LIBRARY_PATH=$PWD/build/headlib:$LD_LIBRARY_PATH timeout 150 $L $args ;;
    byteon) LD_LIBRARY_PATH=$PWD/build/bytelib:$LD_LIBRARY_PATH timeout 150 $L $args ;;
    pairoff) FLAMIA_SM90_QKT=bwd timeout 150 $L $args ;;
    pairon) timeout 150 $L $args ;;
  esac >> $P/latency.log 2>&1 || echo "latency $1 $2 $3 FAILED"
}
summary() {
python3 - $P <<'PY'
import sys, glob, h5py, collections
d = collections.defaultdict(list)
C = ["head", "byteon", "pairoff", "pairon"]
for fn in sorted(glob.glob(sys.argv[1] + "/*.h5")):
    base = fn.split("/")[-1][:-3]; c = base.split("-")[0]; r = base.split("-")[-1]; w = base[len(c) + 1:-len(r) - 1]
    f = h5py.File(fn, "r"); t = f["timings"]; v = f["verify"]
    for j in range(t["pass"].shape[0]):
        d[(w, t["pass"][j].decode(), c)].append(float(t["ms"][j]))
    d[(w, "verify", c)].append("ok" if all(v["ok"][...]) else "FAIL")
print("| workload | pass | " + " | ".join(c + " ms" for c in C) + " | " + " | ".join(c + "/head" for c in C[1:]) + " |")
print("|---|---|" + "---|" * (2 * len(C) - 1))
for w in ["16x4096", "64x1024", "logu-16k"]:
    for p in ["quant", "train"]:
        m = {c: sum(d[(w, p, c)]) / len(d[(w, p, c)]) if d[(w, p, c)] else float("nan") for c in C}
        print("| %s | %s | " % (w, p) + " | ".join("%.3f" % m[c] for c in C) + " | " + " | ".join("%.3f" % (m[c] / m["head"]) for c in C[1:]) + " |")
    print("  verify:", {c: d[(w, "verify", c)] for c in C})
PY
}
for r in 1 2; do
  for w in 16x4096 64x1024 logu-16k; do
    for c in head byteon pairoff pairon; do run $c $w $r; done
  done
done
echo "== after 2 rounds ($SECONDS s)"; summary
grep -E "VERIFY|FAIL|error" $P/latency.log | head
for tool in memcheck racecheck; do
  FLAMIA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/gpu/test_gpu_quantize > $P/san-$tool.log 2>&1
  echo "compute-sanitizer $tool test_gpu_quantize: rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $P/san-$tool.log | sort | uniq -c
done
cp $P/*.log ${OUT:-/tmp}/ 2>/dev/null
