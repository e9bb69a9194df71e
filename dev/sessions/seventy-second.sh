#!/bin/bash
# Seventy-second session. Carry build-carry (bash dev/carry_bins.sh at the commit measured) and, for
# h200, .whl (the cudnn-fp8 peer). Pass FLAMIA_GIT_COMMIT=<hash>.
# Steps tests, memcheck, racecheck, synccheck and h200 are the seventy-first session's
# (dev/sessions/seventy-first.sh, which runs them): racecheck must find 0 hazards in dq_split after its
# fix (55bd12a; 36 reports at ae49162), and h200 re-measures the figures of record (unchanged since d8dca16).
# New step, phases: where the forward's consumers spend their time by program phase (the item's start
# and first tile, the key loop, the item's end and epilogue), from ncu's stall samples of one main
# launch (fwd_kernel, mxfp8, not the SPLIT relaunch) at 16x4096 and 64x1024; the pages come back as
# ncu_fwd_W_sass.csv.gz for dev/ncu_phases.py (the phase offsets depend on the build: read them off
# the page's branches). The forty-fifth session's page (16x4096, dev/logs/forty-fifth_ncu_fwd.tgz)
# put 82 % of the consumers' samples in the key loop; the s256 skeleton (seventy-first) estimated
# 76 % of the kernel at 16x4096 and 63 % at 64x1024. Predicted: 80-84 % at 16x4096 and 55-70 % at 64x1024.
# Step ratios: the default mode's acceptance ratios alone on any GPU (on an H100: did dq_split's fix, 256
# arrivals a stage instead of 8, move the backward? Predicted within +-1 % of the seventieth session's
# 365.8 TFLOP/s and 0.850x at 16x4096).
# Step fwdvar: the forward's variants against the committed kernel, each a patch in dev/forward:
# v129_masked_blocks_skip (the masked tile's 32-key blocks that no row of a warp may see skip both softmax
# passes) and v130_o_tma_store (O by two TMA stores a warpgroup where its 64 rows lie inside the
# document). dev/forward/compare.sh (reference checks, bytes on 9 layouts, the forward timed on 5
# workloads alternated twice; carry dev/forward/bin from `sh dev/forward/build.sh
# dev/forward/v129_masked_blocks_skip.patch dev/forward/v130_o_tma_store.patch`), then the forward's gpu
# tests on each variant's library (carry build-vN/libflamia.so, built here with the patch applied:
# `patch -p1 < dev/forward/vN_NAME.patch && ninja -C build kernels/libflamia.so && mkdir -p build-vN &&
# cp build/kernels/libflamia.so build-vN/ && git checkout kernels/sm90/forward.cu`). CHECK=0 skips
# compare.sh's reference checks, WORKLOADS narrows its timing, FWD_VARIANTS narrows the variants (TEST_VARIANTS
# those whose library the gpu tests load; default FWD_VARIANTS),
# FWDVAR_SAN=1 adds memcheck and racecheck of test_gpu_api's small cases on each library (~100 s each;
# v130 adds asynchronous-proxy reads of the staged O tile, so run it before promoting v130).
# Predicted: same bytes for both; v129 -2..-4 % at 64x1024 and 16x1024, -0.5..-1.5 % at 16x4096; v130
# -1..-3 % at 64x1024 and 16x1024, 0..-1 % at 16x4096. Rule (each): the same bytes, the forward's gpu
# tests passing on its library, and at least 1 % faster on a 1,024-token workload in both rounds with
# no workload slower than 0.5 % in either round promotes it.
# Usage: bash dev/sessions/seventy-second.sh [tests] [memcheck] [racecheck] [synccheck] [phases] [h200] [ratios] [fwdvar]
. dev/device_lib.sh
steps=${*:-tests memcheck racecheck synccheck phases h200}
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
earlier=$(for s in $steps; do case $s in phases|ratios|fwdvar) ;; *) echo -n "$s " ;; esac; done)
[ -n "$earlier" ] && bash dev/sessions/seventy-first.sh $earlier
if has phases; then
  dev_carry >/dev/null
  K=(--kernel-name-base demangled -k "regex:fwd_kernel<\(int\)1, \(int\)3, \(bool\)[01], \(bool\)0, \(bool\)0" -s 2 -c 1)
  for w in 16x4096 64x1024; do
    timeout 150 ncu --clock-control none --section SourceCounters --section WarpStateStats --page source --csv \
      --print-source sass "${K[@]}" $C/experiments/latency/latency --backend cuda --workloads $w --recipes mxfp8 \
      --passes fwd --warmup 2 --iters 3 --verify-rows 0 --quiet --out /tmp/ncu_$w.h5 > $OUT/ncu_fwd_${w}_sass.csv 2>/dev/null
    echo "ncu forward $w: rc=$? ($(dev_elapsed) s)"
    python3 dev/ncu_phases.py $OUT/ncu_fwd_${w}_sass.csv | tail -n 25
    gzip -f $OUT/ncu_fwd_${w}_sass.csv
  done
fi
if has ratios; then
  MODES=default bash dev/sessions/sixty-fifth_ratios.sh
fi
if has fwdvar; then
  dev_carry >/dev/null
  V=${FWD_VARIANTS:-v129_masked_blocks_skip v130_o_tma_store}
  bash dev/forward/compare.sh check_forward $(for v in $V; do echo -n "check_$v "; done) 2>&1 | tee $OUT/fwdvar_compare.log |
    grep -v "^mxfp8 "
  echo "compare done ($(dev_elapsed) s)"
  for v in ${TEST_VARIANTS:-$V}; do
    n=${v%%_*}
    dev_forward_tests_on $PWD/build-$n $OUT/logs/$n
    [ "${FWDVAR_SAN:-0}" = 1 ] && for tool in memcheck racecheck; do
      LD_LIBRARY_PATH=$PWD/build-$n:$LD_LIBRARY_PATH FLAMIA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool $tool \
        --error-exitcode 9 $C/tests/gpu/test_gpu_api > $OUT/logs/$n/${tool}_api.log 2>&1
      echo "$n compute-sanitizer $tool test_gpu_api: rc=$? $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $OUT/logs/$n/${tool}_api.log)"
    done
  done
  grep "^mxfp8 " $OUT/fwdvar_compare.log
  (cd $OUT && tar -czf fwdvar_logs.tgz logs && rm -rf logs)
fi
echo "seventy-second done ($(dev_elapsed) s)"
