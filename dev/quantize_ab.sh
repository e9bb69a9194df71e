#!/bin/bash
# The quantize pass of the carried build (head) against build/base_lib/libflamia.so (base: an
# earlier library built here and carried inside build/), alternated ROUNDS times in one
# command, mxfp8 and mxfp8-exact, medians of 50 CUDA-event timings each; prints a Markdown
# table. Forty-third session. Usage (device, repo root): bash dev/quantize_ab.sh
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
ROUNDS=${ROUNDS:-3}
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
