#!/bin/bash
# Forty-first session: the acceptance figures of issues 4 and 5 re-measured at HEAD, ours and
# cuDNN BF16 (PyTorch SDPA) alternated ROUNDS times in one command on one GPU, as
# dev/sessions/thirty-first_ratio.sh does for the forward alone: forward (ours mxfp8 against cuDNN's
# forward), the training call (ours: quantize + forward + backward from a CUDA graph, against
# cuDNN's forward + backward) and our backward alone (TFLOP/s). Carry build.
# WL and PASSES pick the workloads and our passes (fwd+quant: the forward with its quantize
# pass, against cuDNN's forward; forty-second session).
# Usage (device, repo root): bash dev/sessions/forty-first_ratio.sh > $OUT/ratio.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
H=/tmp/ratio; mkdir -p $H
ROUNDS=${ROUNDS:-4}
WL=${WL:-16x4096,16x1024}
PASSES=${PASSES:-fwd,bwd,train} # add fwd+quant for the forward with quantization (forty-second session)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
t0=$(date +%s)
for r in $(seq 1 $ROUNDS); do
  build/experiments/latency/latency --workloads $WL --recipes mxfp8 --passes $PASSES --warmup 5 --iters 30 \
    --verify-rows 0 --quiet --out "$H/ours_$r.h5" > /tmp/ours_$r.log 2>&1 || { echo "round $r: latency failed"; tail -5 /tmp/ours_$r.log; }
  python3 experiments/latency/peers.py --layouts "$H/ours_$r.h5" --out "$H/peers_$r.h5" --systems cudnn-bf16 \
    --passes fwd,fwdbwd --workloads $WL > /tmp/peers_$r.log 2>&1 || { echo "round $r: peers failed"; tail -5 /tmp/peers_$r.log; }
  echo "round $r done at $(( $(date +%s) - t0 )) s"
done
python3 - "$H" "$ROUNDS" <<'PY'
import sys, statistics as st, h5py
out, rounds = sys.argv[1], int(sys.argv[2])
def rows(f):
    t = h5py.File(f, "r")["timings"]
    return {(w.decode(), s.decode(), p.decode()): ms for w, s, p, ms in
            zip(t["workload"][...], t["system"][...], t["pass"][...], t["ms"][...])}
def causal_flops(docs, L): return 16 * 128 * 4 * docs * L * (L + 1) / 2  # 16 heads, d = 128
flops = {"16x4096": causal_flops(16, 4096), "16x1024": causal_flops(16, 1024),
         "4x4096": causal_flops(4, 4096), "64x1024": causal_flops(64, 1024)}
pairs = [("fwd", "fwd", "forward"), ("fwd+quant", "fwd", "forward + quantize"), ("train", "fwdbwd", "training call")]
res = {}
for r in range(1, rounds + 1):
    try:
        a, b = rows("%s/ours_%d.h5" % (out, r)), rows("%s/peers_%d.h5" % (out, r))
    except Exception as e:
        print("round %d: %s" % (r, e)); continue
    for (w, s, p), ms in a.items():
        res.setdefault((w, "ours", p), []).append(ms)
    for (w, s, p), ms in b.items():
        res.setdefault((w, "cudnn", p), []).append(ms)
print("per round (ms): " + "; ".join("%s %s %s %s" % (k[0], k[1], k[2], " ".join("%.3f" % x for x in v)) for k, v in sorted(res.items())))
for w in sorted({k[0] for k in res}):
    for ours_p, peer_p, name in pairs:
        o, c = res.get((w, "ours", ours_p)), res.get((w, "cudnn", peer_p))
        if not o or not c: continue
        q = [y / x for x, y in zip(o, c)]
        print("%s %s: ours median %.3f ms, cuDNN BF16 median %.3f ms, ratio median %.3f (%.3f-%.3f), %d rounds"
              % (w, name, st.median(o), st.median(c), st.median(q), min(q), max(q), len(q)))
    b = res.get((w, "ours", "bwd"))
    if b: print("%s backward: median %.3f ms = %.1f TFLOP/s causal-discounted (%d rounds)" % (w, st.median(b), 2.5 * flops[w] / st.median(b) / 1e9, len(b)))
PY
tar czf "$OUT/ratio_h5.tgz" -C $H .
echo "total $(( $(date +%s) - t0 )) s"
