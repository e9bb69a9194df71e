#!/bin/bash
# Fifty-fourth session: the forward's row sum over P's rounded values (recipe row_sum =
# FLAMIA_ROWSUM_P_VALUES, the kernels' LPV instantiations; numerics.md 3.4) on the H200.
# Stage "all": build, then test_gpu_forward (new cases "... l of P values" per preset, and V = 1
# both ways: max |O - 1| <= 2^-8 with P values, visibly more with the default rule),
# test_gpu_backward ("GQA 8/2, l of P values") and test_gpu_api (train_step "mxfp8 l=P": the
# training call's instantiation, captured and eager, against the separate calls), then latency
# round 1. Stage "lat2": latency round 2 with the recipe order reversed (drift cancels in the mean).
# Prediction (SASS here, per 64 values of a tile and thread: +32 F2FP unpacks, +64 HADD2.F32,
# +16 PRMT, ~+110 instructions on ~1000 of softmax): mxfp8 forward +3..+8 % if the unpacks
# share the exponentials' pipe, about +0..+3 % if not; training call about half of that.
# Decision rule: <= 3 % on the forward at 16x4096 -> offer it and recommend it for training
# (docs); above -> offer it, say the cost, and count the integer-decode form next.
# First run (2 min build, 3 tests): backward and api ok; forward's new V = 1 cases failed on
# bounds that do not apply (ratios to the reference's error, 0 with V = 1), mxfp8-exact's
# max |O - 1| 2^-7 > 2^-8 and bf16's lse 7.3e-3 > 2e-3 (the bounds now say why: test_gpu_forward.c);
# latency refused PRESET-lsum in the common option check (fixed). Second run:
# TESTS="test_gpu_forward test_gpu_leak test_gpu_e4m3_cvt" (the leak probe's exact recipes now
# include mxfp8-exact-lsum and bf16-lsum; the cvt test checks both P-code decodes). Ran at
# 741a5de: every test ok, the example ok; cost (rounds 1 / 2): forward +8.5/+5.2 % (mxfp8
# 16x4096), +3.7/+4.0 % (mxfp8-exact), +8.9..+9.7 % at 64x1024; training call +0.6..+1.2 %
# (dev/logs/fifty-fourth_lsum_second_*). Above the 3 % rule on the forward: "bits" next.
# The library now takes the names PRESET-lsum itself (flamia_recipe_preset).
# Stage "bits": the integer decode of P's codes in a second build, checked and timed against the
# conversions (only if lat2 shows the conversions above 3 %).
# Usage (device, repo root): [TESTS="..."] [RECIPES=a,b] [WL=w1,w2] bash dev/sessions/fifty-fourth_lsum.sh [all|lat2|bits]
export PATH=/usr/local/cuda/bin:$PATH
. dev/device_lib.sh
dev_setup
stage=${1:-all}
rc=0
if [ "$stage" = all ]; then
  for t in ${TESTS:-test_gpu_forward test_gpu_backward test_gpu_api}; do
    timeout 150 $B/tests/gpu/$t > "$OUT/$t.log" 2>&1
    r=$?; [ $r -eq 0 ] || rc=1
    echo "== $t rc=$r ($(dev_elapsed) s)"
    grep -E "l of P values|V = 1|l=P|FAIL" "$OUT/$t.log" | cut -c1-230 | head -40
    tail -n 1 "$OUT/$t.log"
  done
fi
if [ "$stage" = all ]; then
  echo "== torch_attention.py --recipe mxfp8-lsum (the name through the PyTorch example)"
  timeout 120 python3 examples/torch_attention.py --lib $B/kernels/libflamia.so --recipe mxfp8-lsum > "$OUT/ex.log" 2>&1
  r=$?; [ $r -eq 0 ] || rc=1
  grep -vE "^check_finite" "$OUT/ex.log" | tail -4; echo "rc=$r"
fi
if [ "$stage" = bits ]; then
  # the integer decode (FLAMIA_SM90_LSUM_BITS=1: bit moves and an FMUL a value, no F2FP; SASS
  # here, mxfp8 LPV kernel: 7,256 instructions against the conversions' 6,744 and the
  # default's 6,296) in a second build, checked, then against the conversions: run it only
  # when lat2's table shows the conversions above 3 % on the forward. Only the library and the two
  # tests are built there. Prediction (fifty-fifth session, before the run): the conversions add
  # 7.1 % instructions (6,296 -> 6,744) and cost +5..+10 % time, so their cost looks like issue
  # slots; bits adds 15.2 % (7,256), so if issue slots are the cost bits is slower (~+10..+15 %
  # over the default); only if the conversion pipe was the cost is it faster. Expected: cvt stays.
  # (fifty-fifth.sh may have configured and built it already, beside the gpu suite)
  [ -f build-bits/build.ninja ] || meson setup build-bits -Dcuda=enabled -Dexperiments=enabled --buildtype=release \
    -Dcuda_args=-DFLAMIA_SM90_LSUM_BITS=1 >>$LOG 2>&1
  ninja -C build-bits kernels/libflamia.so tests/gpu/test_gpu_e4m3_cvt tests/gpu/test_gpu_forward >>$LOG 2>&1 || { tail -20 $LOG; exit 1; }
  echo "build-bits ok ($(dev_elapsed) s)"
  for t in test_gpu_e4m3_cvt test_gpu_forward; do
    timeout 150 build-bits/tests/gpu/$t > "$OUT/bits_$t.log" 2>&1
    r=$?; [ $r -eq 0 ] || rc=1
    echo "== build-bits $t rc=$r"; grep -E "P-code decodes|l of P values.*max|FAIL" "$OUT/bits_$t.log" | cut -c1-200 | head -12
  done
  CONFIGS="cvt= bits=LIB=build-bits/kernels" WORKLOADS="16x4096 64x1024" RECIPES=mxfp8-lsum,mxfp8-exact-lsum \
    PASSES=fwd,train ROUNDS=2 DRIVER=$B/experiments/latency/latency OUTDIR="$OUT/bits_ab" bash dev/latency_ab.sh
  echo "all: rc=$rc ($(dev_elapsed) s)"
  exit $rc
fi
rec=${RECIPES:-mxfp8,mxfp8-lsum,mxfp8-exact,mxfp8-exact-lsum}
[ "$stage" = lat2 ] && rec=$(echo "$rec" | tr , '\n' | tac | paste -sd,)
timeout 300 $B/experiments/latency/latency --workloads ${WL:-16x4096,64x1024} --recipes $rec --passes fwd,train \
  --pass-budget 2 --verify-rows 128 --out "$OUT/lsum_$stage.h5" > "$OUT/lsum_$stage.log" 2>&1 || { echo "latency rc=$?"; tail -5 "$OUT/lsum_$stage.log"; rc=1; }
python3 - "$OUT"/lsum_*.h5 <<'PY'
import sys, h5py, collections
ms, ok = collections.defaultdict(list), {}
for fn in sys.argv[1:]:
    f = h5py.File(fn, "r"); t = f["timings"]
    for w, s, p, m in zip(t["workload"][...], t["system"][...], t["pass"][...], t["ms"][...]):
        ms[(w.decode(), s.decode(), p.decode())].append(float(m))
    v = f["verify"]
    for i in range(v["ok"].shape[0]):
        ok[(v["workload"][i].decode(), v["recipe"][i].decode())] = int(v["ok"][i])
print("files: %d; verify not ok: %s" % (len(sys.argv) - 1, [k for k, x in ok.items() if not x] or "none"))
print("| workload | recipe | pass | default ms | l of P values ms | cost |")
print("|---|---|---|---|---|---|")
for (w, s, p), v in ms.items():
    if s.endswith("-lsum") or (w, s + "-lsum", p) not in ms: continue
    a, b = sum(v) / len(v), sum(ms[(w, s + "-lsum", p)]) / len(ms[(w, s + "-lsum", p)])
    print("| %s | %s | %s | %.3f | %.3f | %+.1f %% |" % (w, s[7:], p, a, b, 100 * (b / a - 1)))
PY
echo "all: rc=$rc ($(dev_elapsed) s)"
exit $rc
