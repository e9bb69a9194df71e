#!/bin/bash
# Thirty-first session: the forward's ratio to cuDNN BF16 measured as a distribution. Table A
# times ours and the peers once each per command, and cuDNN's forward has read 1.80-2.04 ms
# at 16x4096 across commands (ours 1.51-1.59), so one command's ratio moves by +-6 %. Here the
# latency driver (ours: mxfp8 forward) and peers.py (cuDNN BF16 forward, the same layouts)
# alternate ROUNDS times in one command on one GPU; each round's ratio, then the median and
# range (HDF5 files in $OUT/ratio_h5.tgz). Usage (device, repo root; carry build): bash dev/sessions/thirty-first_ratio.sh > $OUT/ratio.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
H=/tmp/ratio; mkdir -p $H  # the HDF5 files, as one archive into $OUT at the end
ROUNDS=${ROUNDS:-6}
WL=${WL:-16x4096,4x4096}
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
t0=$(date +%s)
for r in $(seq 1 $ROUNDS); do
  build/experiments/latency/latency --workloads $WL --recipes mxfp8 --passes fwd --warmup 5 --iters 30 \
    --verify-rows 0 --quiet --out "$H/ours_$r.h5" > /tmp/ours_$r.log 2>&1 || { echo "round $r: latency failed"; tail -5 /tmp/ours_$r.log; }
  python3 experiments/latency/peers.py --layouts "$H/ours_$r.h5" --out "$H/peers_$r.h5" --systems cudnn-bf16 \
    --passes fwd --workloads $WL > /tmp/peers_$r.log 2>&1 || { echo "round $r: peers failed"; tail -5 /tmp/peers_$r.log; }
  echo "round $r done at $(( $(date +%s) - t0 )) s"
done
python3 - "$H" "$ROUNDS" <<'PY'
import sys, statistics, h5py
out, rounds = sys.argv[1], int(sys.argv[2])
def rows(f, system):
    t = h5py.File(f, "r")["timings"]
    return {w.decode(): ms for w, s, p, ms in zip(t["workload"][...], t["system"][...], t["pass"][...], t["ms"][...])
            if s.decode() == system and p.decode() == "fwd"}
res = {}
for r in range(1, rounds + 1):
    try:
        a, b = rows("%s/ours_%d.h5" % (out, r), "flamia-mxfp8"), rows("%s/peers_%d.h5" % (out, r), "cudnn-bf16")
    except Exception as e:
        print("round %d: %s" % (r, e)); continue
    for w in a:
        if w in b: res.setdefault(w, []).append((a[w], b[w], b[w] / a[w]))
print("workload  round  ours ms  cuDNN ms  ratio")
for w, v in res.items():
    for i, (x, y, q) in enumerate(v): print("%-9s %5d  %7.3f  %8.3f  %5.3f" % (w, i + 1, x, y, q))
for w, v in res.items():
    qs = [q for _, _, q in v]
    print("%s: ours median %.3f ms (%.3f-%.3f), cuDNN median %.3f ms (%.3f-%.3f), ratio median %.3f, range %.3f-%.3f, %d rounds"
          % (w, statistics.median(x for x, _, _ in v), min(x for x, _, _ in v), max(x for x, _, _ in v),
             statistics.median(y for _, y, _ in v), min(y for _, y, _ in v), max(y for _, y, _ in v),
             statistics.median(qs), min(qs), max(qs), len(qs)))
PY
tar czf "$OUT/ratio_h5.tgz" -C $H .
echo "total $(( $(date +%s) - t0 )) s"
