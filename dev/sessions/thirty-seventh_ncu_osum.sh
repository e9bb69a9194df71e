#!/bin/bash
# Thirty-seventh session (~3 min; carry dev/forward/bin/check_forward, built here = 99940d0's
# kernel): the count says the O sum's cost is its shared-memory bytes (perf-notes, "Forward
# kernel", thirty-seventh session). ncu on one forward launch (16x4096 mxfp8) at O_FLUSH = 0 and
# 4: shared-memory wavefronts and the memory pipes' load, and the stall samples by instruction
# class, side by side.
# Usage (device, repo root): bash dev/sessions/thirty-seventh_ncu_osum.sh > $OUT/ncu_osum.log 2>&1
O=${OUT:-/tmp}
for f in 0 4; do
  echo "== O_FLUSH=$f"
  O_FLUSH=$f timeout 200 bash dev/ncu_profile.sh osum$f fwd_kernel dev/forward/bin/check_forward mxfp8 16x4096 16 16 1 none
  grep -E "Shared|Mem Busy|Max Bandwidth|Mem Pipes|L1/TEX Hit|Elapsed Cycles|Duration" $O/ncu_osum$f.txt | head -20
  O_FLUSH=$f timeout 120 ncu --clock-control none -k regex:fwd_kernel -c 1 --metrics \
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg \
    dev/forward/bin/check_forward mxfp8 16x4096 16 16 1 none 2>&1 | grep -E "l1tex|sm__cycles" 
done
cd $O && tar czf ncu_profiles.tgz ncu_osum0* ncu_osum4* && rm -f ncu_osum0* ncu_osum4*
