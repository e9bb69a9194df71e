#!/bin/bash
# Forty-ninth session: where between 2048 and 4096 tokens GQA's longest-first launch order
# (v112, backward.cu use_order, kOrderMaxSeqlen = 2048) stops paying. The forty-eighth session
# measured -8.7 % at gqa-8x2048 and +4.8 % at gqa-4x4096 (dev/logs/forty-eighth_order.log); this
# times ours alone (ratios.py), the order off (FLAMIA_SM90_BWD_ORDER=0) and on (=2), alternated by
# process, 2 rounds, on 2560-, 3072- and 3584-token documents (16 query heads over 4 kv heads).
# Kernels unchanged: no gpu suite here. Usage (device, repo root): bash dev/sessions/forty-ninth_threshold.sh
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
. dev/device_lib.sh
O=$OUT
dev_setup
WL=${WL:-gqa-6x2560,gqa-5x3072,gqa-4x3584,gqa-8x2048}
dev_order_ab "$WL"
cd "$O" && tar czf logs.tgz *.log *.h5 && rm -f *.log *.h5
