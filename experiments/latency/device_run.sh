#!/bin/bash
# device_run.sh - one full command for the lent GPU machine (run from the repo root):
# builds with meson there, runs the gpu test suite, the latency driver (one process per
# workload, merged: a kernel fault loses one workload, not the run) and peers.py, then
# joins them. Results under $OUT, the logs there as logs.tgz (at most 8 files come back).
#   experiments/latency/device_run.sh [tests] [sanitize] [ours] [ncu] [peers] [flex] [ratios]   (default: tests ours peers)
# ratios: ours and the peers in one process, alternated (ratios.py; after ours, whose file gives the logu-* layouts)
# Env: FLAMIA_GIT_COMMIT (stamped into the HDF5 files), LAT_ARGS, PEER_ARGS, RATIO_ARGS, WORKLOADS, KEEP_LOGS.
set -u
OUT=${OUT:-/tmp/flamia-out}
mkdir -p "$OUT"
STEPS=${*:-tests ours peers}
has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
MESON="meson"; command -v meson >/dev/null || MESON="python3 -m mesonbuild.mesonmain"
B=build-device
WORKLOADS=${WORKLOADS:-4x4096 16x4096 16x1024 64x1024 8192+32x256 8192+224x256 logu-16k logu-64k gqa-16x1024}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
if [ ! -f $B/build.ninja ]; then
  $MESON setup $B -Dcuda=enabled -Dexperiments=enabled >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
else
  # a build dir left by another script (dev/backward/probe.sh sets experiments off) must
  # still build the latency driver
  $MESON configure $B -Dcuda=enabled -Dexperiments=enabled >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
fi
ninja -C $B >>"$OUT/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$OUT/build.log" | head -60; exit 1; }
echo "build ok"
rc=0
if has tests; then
  $MESON test -C $B --suite gpu --print-errorlogs --num-processes 1 >/dev/null 2>&1 || rc=1
  cp $B/meson-logs/testlog.txt "$OUT/testlog.txt"
  grep -E "^(test|result|duration): " "$OUT/testlog.txt" | paste - - - | awk '{print $4, $6, $8, $9, $10}'
  grep -hE "^FAIL|leak probe|graph capture|^train_step|e4m3 hardware|relL2|bit-exact|failures" "$OUT/testlog.txt" | cut -c1-230 | head -70
fi
if has sanitize; then
  # issues 4 and 5: memcheck and racecheck clean on small cases (quantize, forward via the API test;
  # test_gpu_scale_shift runs the deterministic split dQ, test_gpu_backward every dQ path)
  for tool in memcheck racecheck; do
    FLAMIA_TEST_SMALL=1 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/gpu/test_gpu_quantize \
      >"$OUT/sanitize-$tool.log" 2>&1; echo "compute-sanitizer $tool test_gpu_quantize: rc=$?"
    for t in test_gpu_api test_gpu_scale_shift test_gpu_backward; do
      FLAMIA_TEST_SMALL=1 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/gpu/$t >>"$OUT/sanitize-$tool.log" 2>&1
      echo "compute-sanitizer $tool $t: rc=$?"
    done
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitize-$tool.log" | sort | uniq -c
  done
fi
if has ours; then
  P=/tmp/lat-parts; rm -rf $P; mkdir -p $P; i=0; : >"$OUT/ours.log"
  for w in $WORKLOADS; do
    i=$((i+1))
    $B/experiments/latency/latency --workloads "$w" --out "$P/$i.h5" ${LAT_ARGS:-} >>"$OUT/ours.log" 2>&1 \
      || { echo "latency: workload $w FAILED (see ours.log)" | tee -a "$OUT/ours.log"; rc=1; }
  done
  python3 experiments/latency/merge_h5.py "$OUT/ours.h5" $(ls $P/*.h5 | sort -V)
  python3 - "$OUT/ours.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
t, v = f["timings"], f["verify"]
s = lambda a: [x.decode() for x in a[...]]
nan = float("nan")
print("copy ceiling measured: %.0f GB/s" % f["ceiling"]["gbps"][0])
print("%-14s %-12s %8s %6s %5s | %8s %6s | %8s %6s | %8s %6s | %8s %6s | %s" % ("workload", "recipe", "quant ms", "GB/s", "%copy", "fwd ms", "TF/s", "f+q ms", "TF/s", "bwd ms", "TF/s", "train ms", "TF/s", "verify (rel L2, grads, graph grads)"))
tw, ts, tp = s(t["workload"]), s(t["system"]), s(t["pass"])
q = f["quantize"] if "quantize" in f else None
qw, qr = (s(q["workload"]), s(q["recipe"])) if q is not None and q["workload"].shape[0] else ([], [])
vw, vr = s(v["workload"]), s(v["recipe"])
for i in range(len(vw)):
    W, R = vw[i], vr[i]
    def g(p, col):
        for j in range(len(tw)):
            if tw[j] == W and ts[j] == "flamia-" + R and tp[j] == p: return t[col][j]
        return nan
    k = [j for j in range(len(qw)) if qw[j] == W and qr[j] == R]
    gb, fr = (q["gbps"][k[0]], 100 * q["frac_copy_measured"][k[0]]) if k else (nan, nan)
    gf = lambda c: {1: "ok", 0: "FAIL", -1: "-"}.get(int(v[c][i]), "?") if c in v else "?"
    ver = "%s %.1e, %s, %s" % ("ok" if v["ok"][i] else "FAIL", v["ref_rel_l2"][i], gf("grads_finite"), gf("train_grads_finite"))
    print("%-14s %-12s %8.3f %6.0f %5.1f | %8.3f %6.1f | %8.3f %6.1f | %8.3f %6.1f | %8.3f %6.1f | %s" % (W, R, g("quant", "ms"), gb, fr, g("fwd", "ms"), g("fwd", "tflops"), g("fwd+quant", "ms"), g("fwd+quant", "tflops"), g("bwd", "ms"), g("bwd", "tflops"), g("train", "ms"), g("train", "tflops"), ver))
    note = v["note"][i].decode()
    if note: print("    note: " + note[:200])
PY
fi
if has ncu; then
  for r in mxfp8 mxfp8-exact; do
    ncu --clock-control none -k regex:quantize_kernel -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
      $B/experiments/latency/latency --workloads 16x4096 --recipes $r --passes quant --iters 1 --warmup 0 --verify-rows 0 \
      --out /tmp/ncu-$r.h5 >>"$OUT/ncu.txt" 2>&1
  done
  grep -E "quantize_kernel|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Issue Slots Busy|Achieved Occupancy|Registers Per|No Eligible|Eligible Warps|Stall|Warp Cycles Per Issued" "$OUT/ncu.txt" | head -40
fi
# cudnn-fp8 (peers.py, ratios.py) needs PyPI's nvidia-cudnn-frontend: installed once from carried
# wheels (.whl/) when the machine has no internet; without it its rows carry the ImportError
cudnn_frontend() {
  if ls .whl/nvidia_cudnn_frontend-*.whl >/dev/null 2>&1 && [ ! -d /tmp/site-cudnn ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site-cudnn \
      .whl/nvidia_cudnn_frontend-*.whl
  fi
  case ":${PYTHONPATH:-}:" in *:/tmp/site-cudnn:*) ;; *) [ -d /tmp/site-cudnn ] && export PYTHONPATH=/tmp/site-cudnn${PYTHONPATH:+:$PYTHONPATH} ;; esac
}
if has peers || has flex; then
  SYS="cudnn-bf16,flash-bf16,varlen-bf16,cudnn-fp8"; has flex && SYS="$SYS,flex-bf16"
  cudnn_frontend
  PYTHONUNBUFFERED=1 python3 experiments/latency/peers.py --layouts "$OUT/ours.h5" --out "$OUT/peers.h5" \
    --systems "$SYS" --passes fwd,fwdbwd ${PEER_ARGS:-} >"$OUT/peers.log" 2>&1 || rc=1
  grep -E "^  |peers.py|Error" "$OUT/peers.log" | tail -70 | cut -c1-200
  python3 experiments/latency/join.py "$OUT/ours.h5" "$OUT/peers.h5" --recipe mxfp8 | tee "$OUT/join.md"
fi
if has ratios; then
  cudnn_frontend
  LAYOUTS=""; [ -f "$OUT/ours.h5" ] && LAYOUTS="--layouts $OUT/ours.h5"
  WL_RATIOS=$(for w in $WORKLOADS; do case $w in logu-*) [ -n "$LAYOUTS" ] && echo $w ;; *) echo $w ;; esac; done | paste -sd,)
  FLAMIA_LIB=$PWD/$B/kernels/libflamia.so PYTHONUNBUFFERED=1 python3 experiments/latency/ratios.py $LAYOUTS \
    --workloads "$WL_RATIOS" --out "$OUT/ratios_gpu.h5" ${RATIO_ARGS:-} >"$OUT/ratios.log" 2>&1 || rc=1
  grep -E "^\| |^issue|ratios.py" "$OUT/ratios.log" | tail -70 | cut -c1-220
fi
# the device tool brings back at most 8 files from $OUT: the logs travel as one archive
# (logs.tgz), so that the HDF5 files and join.md always come back (tools/device_all.sh,
# which logs into $OUT across several calls, sets KEEP_LOGS=1)
[ -n "${KEEP_LOGS:-}" ] || ( cd "$OUT" && logs=$(ls *.log *.txt 2>/dev/null; true) && [ -n "$logs" ] && tar czf logs.tgz $logs && rm -f $logs )
exit $rc
