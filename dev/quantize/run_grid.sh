#!/bin/bash
# Device comparison of quantize builds against the committed kernel (check_quantize): the
# grid shapes below (kernels/sm90/quantize.cu with other FLAMIA_QUANT_TARGET_CTAS /
# FLAMIA_QUANT_MAX_SLOTS), or any check_quantize_* named in $V. Every workspace byte against the
# host image (full battery for the committed shape, the quick one for the others), then the
# median of 30 CUDA-event timings, the committed shape first and last so drift shows.
# Build here first and carry dev/quantize/bin:
#   sh dev/quantize/build.sh "kernels/sm90/quantize.cu@c4k=FLAMIA_QUANT_TARGET_CTAS=4096,FLAMIA_QUANT_MAX_SLOTS=48" \
#     "kernels/sm90/quantize.cu@c2k=FLAMIA_QUANT_TARGET_CTAS=2048,FLAMIA_QUANT_MAX_SLOTS=48" \
#     "kernels/sm90/quantize.cu@c1k=FLAMIA_QUANT_TARGET_CTAS=1056,FLAMIA_QUANT_MAX_SLOTS=48" \
#     "kernels/sm90/quantize.cu@s16=FLAMIA_QUANT_MAX_SLOTS=16"
# Usage (device, repo root): [V="check_quantize_X ..."] bash dev/quantize/run_grid.sh   (log: $OUT/quant_grid.txt)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
B=dev/quantize/bin
LOG=${OUT:-/tmp}/quant_grid.txt
V=${V:-"check_quantize_c4k check_quantize_c2k check_quantize_c1k check_quantize_s16"} # or the builds named in $V
t() { local b=$1; shift; timeout ${TMO:-60} $B/$b "$@" 2>&1 | sed "s|^|$b: |" >> $LOG; }
t check_quantize check
for b in $V; do t $b quick; done
for b in check_quantize $V check_quantize; do TMO=40 t $b time 16x4096,logu-64k,4x4096,logu-16k 30; done
grep -E "bit-exact|FAIL| time " $LOG | grep -v " ok" | sed 's/ T=.*median/ median/; s/ (min.*GB  */  /'
