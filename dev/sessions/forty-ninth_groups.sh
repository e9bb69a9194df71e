#!/bin/bash
# Forty-ninth session: GQA's longest-first launch order (v112) at other group sizes. Measured so far
# only with groups of 4 (16 query heads over 4 kv heads); dev/tail_model.py predicts little for
# groups of 2 and much for groups of 8, at 4096 tokens too. Ours alone (ratios.py; gqaN-: N kv
# heads), the order off (FLAMIA_SM90_BWD_ORDER=0) and on (=2), alternated by process, 2 rounds.
# Kernels unchanged: no gpu suite here. Usage (device, repo root): bash dev/sessions/forty-ninth_groups.sh
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
. dev/device_lib.sh
O=$OUT
dev_setup
WL=${WL:-gqa2-16x1024,gqa2-5x3072,gqa2-4x4096,gqa8-16x1024,gqa8-5x3072,gqa8-4x4096}
dev_order_ab "$WL" 60
cd "$O" && tar czf logs.tgz *.log *.h5 && rm -f *.log *.h5
