#!/bin/bash
# Fourteenth session (~3 min): the training call's dq_accum zeroed by the forward's producer
# (per item, streaming stores after its loads; the DQZ instantiation) instead of by bwd_pre_do
# (537 MB of its ~1.5 GB at 16x4096). Three configurations of one latency driver, alternated,
# two rounds: the library before the change (LD_LIBRARY_PATH=build/headlib; RUNPATH comes after
# it), this tree's with FLAMIA_SM90_DQ_ZERO=bwd ("off": the zeroing in bwd_pre_do) and its
# default ("on"). First the correctness: test_gpu_api and test_gpu_leak (train_step eager and
# graph-replayed on poisoned buffers; the dQ leak probe), the driver's own verification, and
# last memcheck / racecheck on test_gpu_api.
# Carry: build (this tree, meson with -Dcuda=enabled -Dexperiments=enabled, built here) and
# build/headlib/libflamia.so (the commit before the switch, d977b59).
# Usage (device, repo root): bash dev/fourteenth_dqzero.sh > $OUT/dqzero.log 2>&1
export OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
B=build L=build/experiments/latency/latency H=$PWD/build/headlib P=/tmp/dqz
mkdir -p $P
ldd $L build/headlib/libflamia.so | grep "not found"
for t in test_gpu_api test_gpu_leak; do
  timeout 120 $B/tests/gpu/$t > $P/$t.log 2>&1
  echo "$t (the forward zeroes dq_accum): rc=$?"; grep -E "graph capture.*train_step|leak|FAIL|failures" $P/$t.log | head -8
done
run() { # config workload round
  local out=$P/$1-$2-$3.h5 args="--workloads $2 --recipes mxfp8 --passes fwd,train --pass-budget 2 --out $P/$1-$2-$3.h5"
  case $1 in
    head) LD_LIBRARY_PATH=$H:$LD_LIBRARY_PATH timeout 120 $L $args ;;
    off) FLAMIA_SM90_DQ_ZERO=bwd timeout 120 $L $args ;;
    on) timeout 120 $L $args ;;
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
        d[(w, t["pass"][j].decode(), c)].append(float(t["ms"][j]))
    d[(w, "verify", c)].append("ok" if all(v["ok"][...]) else "FAIL")
print("| workload | pass | HEAD ms | off ms | on ms | on / off | on / HEAD | verify HEAD/off/on |")
print("|---|---|---|---|---|---|---|---|")
for w in ["16x4096", "64x1024", "logu-16k"]:
    for p in ["fwd", "train"]:
        m = {c: sum(d[(w, p, c)]) / len(d[(w, p, c)]) if d[(w, p, c)] else float("nan") for c in ["head", "off", "on"]}
        ver = "/".join(",".join(d[(w, "verify", c)]) for c in ["head", "off", "on"])
        print("| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %s |" % (w, p, m["head"], m["off"], m["on"], m["on"] / m["off"], m["on"] / m["head"], ver))
        print("  rounds:", {c: ["%.3f" % x for x in d[(w, p, c)]] for c in ["head", "off", "on"]})
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
for tool in memcheck racecheck; do # the DQZ kernels under the sanitizers (test_gpu_api runs train_step)
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/gpu/test_gpu_api > $P/san-$tool.log 2>&1
  echo "compute-sanitizer $tool test_gpu_api: rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $P/san-$tool.log | sort | uniq -c
done
