#!/bin/bash
# Eighty-first session. One step (default: both), v148 (prepared in the eightieth session; its
# prediction and rule are in dev/sessions/eightieth.sh) and v149 beside the committed harness:
#   compare.sh on the three builds (bytes in the deterministic mode, three layouts, both recipes;
#   the default mode's reference checks; two timing rounds, mxfp8, 16x4096, 64x1024, 16x1024), two
#   more rounds of v149 and of v148 against the committed kernel, v149's bytes per gradient (it
#   changes dQ by design), then racecheck and synccheck on both while time is left. Carry build-pack
#   (`sh dev/backward/build.sh dev/backward/v148_ds_stsm_split.patch dev/backward/v149_split_dq_exact.patch`,
#   then `sh dev/pack_carry.sh dev/backward/bin/check_backward dev/backward/bin/check_v148_ds_stsm_split
#   dev/backward/bin/check_v149_split_dq_exact`). ~300 s.
#
#   v149 (dev/backward/v149_split_dq_exact.patch): the split dQ (the default mode's dQ at these shapes)
#     takes numerics.md 4.6's exact option instead of the pair fold. The main kernel stores the dS
#     codes themselves as dQ's operand (mxfp8: the dK operand's code; the 16 re-encodings by 2^-s a
#     sub-step, the pair's F and its shuffles go; mxfp8-exact: one warpgroup barrier fewer) and
#     G = eDS + EKmax per (key block, query) as int16 in the 256 bytes that held the pair's float
#     factor; dq_split runs one k=32 product a key block and scales each by 2^G softmax_scale.
#     Why: the eightieth session's count puts 342 of the sub-step's ~1,200 instructions a warp in the
#     dS maxima and codes, on the path; the fold exists to save dQ's FP32 adds in the main kernel
#     (v40), which the split moved to dq_split, a DRAM-bound stream (its skeleton read the dS codes at
#     77 % of an H100's bandwidth) with room for two more products a tile.
#     ptxas: split kernels 0 B of spills on both recipes (committed 0), dq_split 154 registers, 0 B.
#     Predicted (written before any run): dK and dV the same bytes, dQ different but its error against
#     the reference no larger (the lower block's subnormal shift gone); the backward -1..-3 % at
#     16x4096 and about as much at 1,024 tokens (~50 of ~1,200 instructions a warp and sub-step on the
#     path; dq_split's extra products under its DRAM time).
#     Rule: promote (into kernels/, numerics.md 4.6 and the gpu suite on every dQ path) if dK and dV
#     keep their bytes on every layout, every check passes with dQ's relL2 (two digits) no larger and
#     its cosine (six digits) no lower than the committed kernel's on any layout, racecheck and synccheck are clean, and the backward is >= 1 %
#     faster at 16x4096 (median of four rounds) and nowhere > 0.3 % slower.
#   promoted (measured 16:1x UTC: v148 -4.4 / -2.3 / -2.9 %, v149 -2.0 / -1.2 / -1.5 % at 16x4096 / 64x1024 /
#     16x1024, H100; both met their rules and went into kernels/): the library with both, checked and timed.
#     The committed kernels of 8cd9da5 (dev/backward/committed_8cd9da5.patch) against the working tree's
#     check_backward, four timing rounds (no reference checks: v148 and v149 passed theirs in step both);
#     then every gpu test program of build-carry (`bash dev/carry_bins.sh`: the library at the promotion),
#     then test_gpu_backward's small mode under memcheck, racecheck and synccheck while time is left. Carry
#     build-carry and build-pack (`sh dev/backward/build.sh dev/backward/committed_8cd9da5.patch`, then
#     `sh dev/pack_carry.sh dev/backward/bin/check_backward dev/backward/bin/check_committed_8cd9da5`).
#     Predicted: the suite passes; the two together -5..-7 % at 16x4096 and -3..-5 % at 1,024 tokens
#     (each alone -4.4 / -2.0 %; v149 takes 16 re-encodings out of the loop whose stores v148 replaced,
#     so the two may overlap).
#   final: on an H200, the record of dcd549d's kernels (dev/sessions/seventy-eighth.sh record: the acceptance
#     ratios, Table D's pair, the gpu suite; carry build-carry and .whl, FLAMIA_GIT_COMMIT=dcd549d); on any
#     other card, mxfp8-exact's backward timed, committed (8cd9da5) against dcd549d, four rounds (carry
#     build-pack as for promoted): v149 changed that recipe's split kernel (one warpgroup barrier fewer a
#     sub-step, dq_split's four products), v148 did not, and only mxfp8 was timed. Predicted: -0.5..-2 %.
#   v150: dev/backward/v150_codes_one_register.patch beside the committed harness (4cd8d18's kernels), as
#     step both ran v148: dev_bwd_compare (bytes on three layouts, both recipes; the default mode's checks; two
#     timing rounds, then two more), racecheck and synccheck. Carry build-pack (`sh dev/backward/build.sh
#     dev/backward/v150_codes_one_register.patch`, then `sh dev/pack_carry.sh dev/backward/bin/check_backward
#     dev/backward/bin/check_v150_codes_one_register`). ~150 s.
#     Why: the recount's SASS (dev/logs/eighty-first_ncu_split_h100.csv.gz) shows the codes loop masking each
#     of its 16 cvt results with LOP3 0xffff (a uint16_t widened in C++) before the byte permutes; v150 packs
#     four codes a register so that only permutes follow. Static SASS 5,576 -> 5,560.
#     Predicted (written before any run): the same bytes; -0.5..-1.5 % at 16x4096 (16 of ~1,070 instructions
#     a warp and sub-step, in the phase that v148 and v149 showed to be on the path), about as much at 1,024
#     tokens. Rule: promote if the same bytes on every layout, checks and sanitizers clean, >= 0.5 % faster at
#     16x4096 (median of four rounds) and nowhere > 0.3 % slower.
#   v151 (prepared, not run: no device time was left): dev/backward/v151_store_under_dv.patch beside the
#     committed harness, as v150 (carry build-pack: `sh dev/backward/build.sh dev/backward/v151_store_under_dv.patch`,
#     then `sh dev/pack_carry.sh dev/backward/bin/check_backward dev/backward/bin/check_v151_store_under_dv`). ~150 s.
#     Why: in the recount the split's dS store (its warpgroup barrier, then thread 0's stores) held 4.5 % of
#     the stall samples, after the sub-step's last wgmma wait; v151 issues it right after dV's products.
#     Predicted (written before any run): the same bytes; -0.5..-2 % at 16x4096 and at 1,024 tokens.
#     Rule: promote if the same bytes on every layout, checks and sanitizers clean, >= 0.5 % faster at
#     16x4096 (median of four rounds) and nowhere > 0.3 % slower.
# Usage (device, repo root): [CALL_S=s] bash dev/sessions/eighty-first.sh [both] [promoted] [final] [v150] [v151]
. dev/device_lib.sh
steps=${*:-both}
CALL_S=${CALL_S:-570}
V148=check_v148_ds_stsm_split V149=check_v149_split_dq_exact
W="16x4096 16 16 1|64x1024 16 16 1|16x1024 16 16 1"
# committed_vs_head KIND LOG: 8cd9da5's backward against the working tree's, four timing rounds of KIND on W
# (two compare.sh calls), each build's times sorted
committed_vs_head() {
  local r
  for r in 1 2; do
    CHECK=0 TKINDS=$1 WORKLOADS="$W" bash dev/backward/compare.sh check_committed_8cd9da5 check_backward 2>&1 |
      tee -a $2 | grep "^$1"
  done
  dev_bwd_sorted $2 $1 "$W" check_committed_8cd9da5 check_backward
}
if [[ " $steps " == *" both "* ]]; then
  dev_unpack_carry
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  export OMP_NUM_THREADS=16
  dev_bwd_compare both "$W" check_backward $V148 $V149
  echo "PASS lines: $(grep -c PASS $OUT/both_compare.log), FAIL lines: $(grep -c FAIL $OUT/both_compare.log)"
  CHECK=0 TKINDS=mxfp8 WORKLOADS="$W" bash dev/backward/compare.sh check_backward $V148 2>&1 |
    tee -a $OUT/both_compare.log | grep "^mxfp8"
  dev_bwd_sorted $OUT/both_compare.log mxfp8 "$W" $V148
  echo "== dQ against the reference (relL2 maxrel cos), committed then v149:"
  grep -E "^(check_backward|$V149): " $OUT/both_compare.log | grep -o "^[a-z0-9_]*: [a-z0-9]* v[0-9] [a-z0-9:]*\|relL2/maxrel/cos dQ [^d]*" | paste - -
  for k in mxfp8 exact; do
    dev_bwd_gradient_bytes $V149 $k rand3000:1 4 2 1
    dev_bwd_gradient_bytes $V149 $k rand2000:3 8 2 1
    dev_bwd_gradient_bytes $V149 $k 3x1024 4 4 0
  done
  dev_bwd_sanitizers $V149 v149 40
  dev_bwd_sanitizers $V148 v148 40
fi
if [[ " $steps " == *" promoted "* ]]; then
  dev_unpack_carry
  dev_carry
  committed_vs_head mxfp8 $OUT/promoted_timing.log
  echo "timing done ($(dev_elapsed) s)"
  dev_all_gpu_tests
  echo "tests done ($(dev_elapsed) s)"
  for tool in memcheck racecheck synccheck; do
    [ $(( CALL_S - $(dev_elapsed) )) -gt 60 ] || { echo "$tool: no time left"; continue; }
    FLAMIA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool $tool $C/tests/gpu/test_gpu_backward > $OUT/logs/small_$tool.log 2>&1
    echo "$tool: rc=$? $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $OUT/logs/small_$tool.log | tail -1)"
  done
  (cd $OUT && tar czf logs.tgz logs && rm -rf logs)
fi
if [[ " $steps " == *" v150 "* ]]; then
  dev_bwd_variant v150 check_v150_codes_one_register
fi
if [[ " $steps " == *" v151 "* ]]; then
  dev_bwd_variant v151 check_v151_store_under_dv
fi
if [[ " $steps " == *" final "* ]]; then
  case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
    *H200*) CALL_S=$(( CALL_S - $(dev_elapsed) )) bash dev/sessions/seventy-eighth.sh record ;;
    *)
      dev_unpack_carry
      export OMP_NUM_THREADS=16
      nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
      committed_vs_head exact $OUT/exact_timing.log ;;
  esac
fi
echo "done ($(dev_elapsed) s)"
