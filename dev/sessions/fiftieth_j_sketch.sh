#!/bin/bash
# Fiftieth session (prepared, not run: no device was lent): the j_sketch timing skeleton (the two
# consumer warpgroups split by product and one sub-step apart; dev/backward/j_sketch/j_sketch.cu)
# against i_sketch (fortieth session, 7.62 ms) in one command. Results are timings of skeletons:
# their outputs are meaningless. First compute-sanitizer's synccheck and memcheck on one 4096-token
# document (barrier misuse, out-of-bounds), then 16x4096, binaries alternated, 2 rounds: j_sketch
# (both warpgroups prefetch), _apf (A's prefetch only), _pf0 (neither), _noadds (dQ not added).
# Prediction (j_sketch.cu's header): j_sketch between -20 % and +15 % of i_sketch's time.
# Usage (device, repo root): bash dev/sessions/fiftieth_j_sketch.sh   (~5 minutes)
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/flamia-out}
mkdir -p "$O" dev/backward/bin
F="-std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Ikernels/include -Ikernels/formats -Ikernels/sm90"
s=$SECONDS
nvcc $F dev/backward/i_sketch/i_sketch.cu -lcuda -o dev/backward/bin/i_sketch 2>&1 | grep -v "177-D\|Remark" | head -5
nvcc $F dev/backward/j_sketch/j_sketch.cu -lcuda -o dev/backward/bin/j_sketch 2>&1 | grep -v "177-D\|Remark" | head -5
nvcc $F -DJ_BPREFETCH=0 dev/backward/j_sketch/j_sketch.cu -lcuda -o dev/backward/bin/j_sketch_apf 2>&1 | grep -v "177-D\|Remark" | head -5
nvcc $F -DJ_PREFETCH=0 -DJ_BPREFETCH=0 dev/backward/j_sketch/j_sketch.cu -lcuda -o dev/backward/bin/j_sketch_pf0 2>&1 | grep -v "177-D\|Remark" | head -5
nvcc $F -DJ_NO_ADDS=1 dev/backward/j_sketch/j_sketch.cu -lcuda -o dev/backward/bin/j_sketch_noadds 2>&1 | grep -v "177-D\|Remark" | head -5
echo "built ($((SECONDS - s)) s)"
cuobjdump -sass dev/backward/bin/j_sketch | grep -cE "QGMMA|HGMMA" | sed 's/^/j_sketch wgmma instructions in SASS: /'
# A hang must not eat the command's 10 minutes (the logs are packed only at the end): each
# variant runs once on 1 document first (20 s limit); one that fails or hangs is left out of
# everything after, and the sanitizers run only on a j_sketch that passed.
ok=""
for b in i_sketch j_sketch j_sketch_apf j_sketch_pf0 j_sketch_noadds; do
  timeout 20 dev/backward/bin/$b 1 > "$O/${b}_smoke.log" 2>&1
  r=$?; echo "smoke (1 document) $b rc=$r: $(tail -1 "$O/${b}_smoke.log")"
  [ $r -eq 0 ] && ok="$ok $b"
done
if [[ " $ok " == *" j_sketch "* ]]; then
  for tool in synccheck memcheck; do
    timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 dev/backward/bin/j_sketch 1 > "$O/j_$tool.log" 2>&1
    echo "compute-sanitizer $tool (1 document): rc=$?"; tail -3 "$O/j_$tool.log"
  done
fi
for r in 1 2; do
  for b in $ok; do
    timeout 30 dev/backward/bin/$b > "$O/${b}_r$r.log" 2>&1
    echo "r$r $b rc=$?: $(tail -1 "$O/${b}_r$r.log")"
  done
done
# ncu of one j_sketch launch: the figures the fortieth session read for i_sketch (issue slots
# busy 49 %, 1.07 of 3.99 warps eligible a scheduler; dev/logs/fortieth_ncu_isketch_summary.txt)
[[ " $ok " == *" j_sketch "* ]] && timeout 120 ncu --clock-control none -k regex:j_sketch -s 2 -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
  --section SchedulerStats --section WarpStateStats dev/backward/bin/j_sketch > "$O/ncu_j_sketch.log" 2>&1
echo "ncu j_sketch: rc=$?"
grep -E "Duration|Issue Slots Busy|Executed Ipc Active|One or More Eligible|Eligible Warps Per Scheduler|Active Warps Per Scheduler|Warp Cycles Per Issued" "$O/ncu_j_sketch.log" | head -12
cd "$O" && tar czf j_sketch_logs.tgz *.log && rm -f *.log
