#!/bin/bash
# One pass (PASS: quant, the default, or fwd, bwd, train, fwd+quant) of several libflamia
# builds alternated ROUNDS times in one command, mxfp8 and mxfp8-exact, medians of 50
# CUDA-event timings each; prints a Markdown table against the first. VARIANTS=name=dir,... (default base=build/base_lib,head=): each dir holds a
# libflamia.so built here and carried inside build/; an empty dir is the carried build itself.
# Forty-third session (PASS: forty-fourth). Usage (device, repo root): bash dev/quantize_ab.sh
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
ROUNDS=${ROUNDS:-3}
VARIANTS=${VARIANTS:-base=build/base_lib,head=}
WL=${WL:-16x4096,16x1024,8192+224x256,logu-64k}
PASS=${PASS:-quant}
mkdir -p /tmp/q
for r in $(seq 1 $ROUNDS); do
  for nv in ${VARIANTS//,/ }; do
    b=${nv%%=*} dir=${nv#*=}
    if [ -n "$dir" ]; then lp=$PWD/$dir:$LD_LIBRARY_PATH; else lp=$LD_LIBRARY_PATH; fi
    LD_LIBRARY_PATH=$lp build/experiments/latency/latency --workloads $WL --recipes mxfp8,mxfp8-exact \
      --passes $PASS --warmup 10 --iters 50 --verify-rows 0 --quiet --out /tmp/q/${b}_$r.h5 > /tmp/q/${b}_$r.log 2>&1 ||
      { echo "$b round $r failed"; tail -5 /tmp/q/${b}_$r.log; }
  done
done
python3 - /tmp/q $ROUNDS $VARIANTS $PASS <<'PY'
import sys, statistics as st, h5py
d, rounds, pas = sys.argv[1], int(sys.argv[2]), sys.argv[4]
names = [v.split("=")[0] for v in sys.argv[3].split(",")]
res = {}
for b in names:
    for r in range(1, rounds + 1):
        try:
            f = h5py.File("%s/%s_%d.h5" % (d, b, r), "r")
        except Exception as e:
            print(b, r, e); continue
        if pas == "quant":
            t = f["quantize"]
            rows = zip(t["workload"][...], t["recipe"][...], t["ms"][...], t["frac_copy_measured"][...])
        else:  # the timings of our systems in this pass; no copy fraction
            t = f["timings"]
            rows = [(w, s_[len(b"flamia-"):], ms, float("nan")) for w, s_, p_, ms in
                    zip(t["workload"][...], t["system"][...], t["pass"][...], t["ms"][...]) if p_.decode() == pas]
        for w, rec, ms, fc in rows:
            res.setdefault((w.decode(), rec.decode(), b), []).append(float(ms))
            res.setdefault((w.decode(), rec.decode(), b + "_copy"), []).append(float(fc))
print("| workload | recipe | " + " | ".join("%s ms (rounds)" % b for b in names) + " | " +
      " | ".join("%s vs %s" % (b, names[0]) for b in names[1:]) + " | %s, fraction of copy |" % names[-1])
print("|---" * (2 * len(names) + 2) + "|")
for w, rec in sorted({(k[0], k[1]) for k in res}):
    ms = [res.get((w, rec, b), []) for b in names]
    if all(ms):
        med = [st.median(x) for x in ms]
        print("| %s | %s | " % (w, rec) + " | ".join("%.4f (%s)" % (m, " ".join("%.4f" % x for x in xs)) for m, xs in zip(med, ms)) +
              " | " + " | ".join("%+.1f %%" % (100 * (m / med[0] - 1)) for m in med[1:]) +
              " | %.2f |" % st.median(res[(w, rec, names[-1] + "_copy")]))
PY
