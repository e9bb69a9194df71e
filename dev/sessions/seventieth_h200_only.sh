#!/bin/bash
# Seventieth session, the last of its device time: the acceptance ratios (default mode, 3 rounds) and
# Table D's pair, ONLY on an H200 (the acceptance GPU: its figures of record date from the sixty-first
# session, d8dca16); on any other GPU it stops at once. Carry build-carry (bash dev/carry_bins.sh) and
# .whl; pass FLAMIA_GIT_COMMIT=<hash>. What to do with the files: dev/sessions/sixty-ninth_queued.sh's
# header (the default run becomes data/measured/h200/ratios_gpu.h5; the pair goes to data/measured/h200
# and h100's pair is dropped). Predicted from the H100 (365.8 TFLOP/s, 0.850x at 71e644c): backward
# ~365-380 TFLOP/s at 16x4096, training call ~0.84-0.88x cuDNN BF16, 4 of 9 ahead of the fastest peer.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$gpu"
case $gpu in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
. dev/device_lib.sh
dev_carry
dev_table_d
MODES=default bash dev/sessions/sixty-fifth_ratios.sh
