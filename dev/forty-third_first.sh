#!/bin/bash
# Forty-third session, first device command (~6 min; carry build; build/base_lib holds the library of
# deabf7f built here: meson setup + ninja kernels/libflamia.so in a worktree, copied there).
# (1) the gpu suite of the carried build (flamia_cuda_check_finite and the per-tensor record
#     bits: test_gpu_api, test_gpu_quantize) and racecheck of test_gpu_forward;
# (2) the PyTorch example in the three recipes (its new check_finite=True case included);
# (3) the quantize pass before (build/base_lib) and after the record bits, alternated ROUNDS times:
#     the kernels' only change is one select and shift a 32-token block, so expect 0 %.
# Usage (device, repo root): bash dev/forty-third_first.sh > $OUT/first.log 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
ROUNDS=${ROUNDS:-3}
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
echo "== (1) gpu suite (the carried build)"
mkdir -p /tmp/suite && OUT=/tmp/suite bash dev/gpu_suite_carried.sh 150
grep -h "check_finite\|capturing" /tmp/suite/tests/test_gpu_api.log | head -12
tar czf "$O/suite_logs.tgz" -C /tmp/suite .
echo "== (1) done at $(( $(date +%s) - t0 )) s"
echo "== (2) PyTorch example"
for r in mxfp8 mxfp8-exact bf16; do
  timeout 120 python3 examples/torch_attention.py --lib build/kernels/libflamia.so --recipe $r 2>&1 | tail -9
  echo "example $r: rc=$?"
done
echo "== (2) done at $(( $(date +%s) - t0 )) s"
echo "== (3) quantize, base (deabf7f) against HEAD, $ROUNDS alternated rounds"
WL=16x4096,16x1024,8192+224x256,logu-64k
mkdir -p /tmp/q
for r in $(seq 1 $ROUNDS); do
  for b in head base; do
    if [ $b = base ]; then lp=$PWD/build/base_lib:$LD_LIBRARY_PATH; else lp=$LD_LIBRARY_PATH; fi
    LD_LIBRARY_PATH=$lp build/experiments/latency/latency --workloads $WL --recipes mxfp8,mxfp8-exact \
      --passes quant --warmup 10 --iters 50 --verify-rows 0 --quiet --out /tmp/q/${b}_$r.h5 > /tmp/q/${b}_$r.log 2>&1 ||
      { echo "$b round $r failed"; tail -5 /tmp/q/${b}_$r.log; }
  done
done
python3 - /tmp/q $ROUNDS <<'PY'
import sys, statistics as st, h5py
d, rounds = sys.argv[1], int(sys.argv[2])
res = {}
for b in ("base", "head"):
    for r in range(1, rounds + 1):
        try:
            t = h5py.File("%s/%s_%d.h5" % (d, b, r), "r")["quantize"]
        except Exception as e:
            print(b, r, e); continue
        for w, rec, ms, fc in zip(t["workload"][...], t["recipe"][...], t["ms"][...], t["frac_copy_measured"][...]):
            res.setdefault((w.decode(), rec.decode(), b), []).append(float(ms))
            res.setdefault((w.decode(), rec.decode(), b + "_copy"), []).append(float(fc))
print("| workload | recipe | base ms (rounds) | head ms (rounds) | change | head, fraction of copy |")
print("|---|---|---|---|---|---|")
for w, rec in sorted({(k[0], k[1]) for k in res}):
    a, h = res.get((w, rec, "base"), []), res.get((w, rec, "head"), [])
    if a and h and not rec.endswith("_copy"):
        print("| %s | %s | %.4f (%s) | %.4f (%s) | %+.1f %% | %.2f |" % (w, rec, st.median(a), " ".join("%.4f" % x for x in a),
              st.median(h), " ".join("%.4f" % x for x in h), 100 * (st.median(h) / st.median(a) - 1),
              st.median(res[(w, rec, "head_copy")])))
PY
echo "== total $(( $(date +%s) - t0 )) s"
