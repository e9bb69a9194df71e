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
# Step v129: dev/forward/v129_masked_blocks_skip.patch (the masked tile's 32-key blocks that no row of a
# warp may see skip both softmax passes) against the committed kernel: dev/forward/compare.sh (reference
# checks, bytes on 9 layouts, the forward timed on 5 workloads alternated twice; carry dev/forward/bin
# from `sh dev/forward/build.sh dev/forward/v129_masked_blocks_skip.patch`), then the forward's gpu
# tests on the variant's library (carry build-v129/libflamia.so, built here with the patch applied:
# `patch -p1 < dev/forward/v129_masked_blocks_skip.patch && ninja -C build kernels/libflamia.so &&
# mkdir -p build-v129 && cp build/kernels/libflamia.so build-v129/ && git checkout kernels/sm90/forward.cu`).
# CHECK=0 skips compare.sh's reference checks, WORKLOADS narrows its timing (device time short).
# Predicted: same bytes; -2..-4 % at 64x1024 and 16x1024, -0.5..-1.5 % at 16x4096. Rule: same bytes,
# the tests pass, and at least 1 % faster on a 1,024-token workload in both rounds with no workload
# slower than 0.5 % in either round promotes it.
# Usage: bash dev/sessions/seventy-second.sh [tests] [memcheck] [racecheck] [synccheck] [phases] [h200] [ratios] [v129]
. dev/device_lib.sh
steps=${*:-tests memcheck racecheck synccheck phases h200}
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
earlier=$(for s in $steps; do case $s in phases|ratios|v129) ;; *) echo -n "$s " ;; esac; done)
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
if has v129; then
  dev_carry >/dev/null
  bash dev/forward/compare.sh check_forward check_v129_masked_blocks_skip 2>&1 | tee $OUT/v129_compare.log | grep -v "^mxfp8 " 
  echo "v129 compare done ($(dev_elapsed) s)"
  LD_LIBRARY_PATH=$PWD/build-v129:$LD_LIBRARY_PATH ldd $C/tests/gpu/test_gpu_forward | grep flamia
  LD_LIBRARY_PATH=$PWD/build-v129:$LD_LIBRARY_PATH dev_gpu_tests $C/tests/gpu $OUT/logs test_gpu_forward test_gpu_consistency \
    test_gpu_leak test_gpu_padded test_gpu_api
  grep "^mxfp8 " $OUT/v129_compare.log
  (cd $OUT && tar -czf v129_logs.tgz logs && rm -rf logs)
fi
echo "seventy-second done ($(dev_elapsed) s)"
