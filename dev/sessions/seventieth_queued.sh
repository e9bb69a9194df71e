#!/bin/bash
# Queued by the sixty-ninth session. Carry build-carry (bash dev/carry_bins.sh at the commit measured)
# and .whl (the cudnn-fp8 peer). Pass FLAMIA_GIT_COMMIT=<hash>. Best on an H200.
# 1. Every gpu test program: the first run of the tests' layout fix (1380e49: gpu_call_layout, the calls'
#    own layout through flamia_sm90_layout_for_call). Predicted: all ten rc 0 (at c36dacf test_gpu_forward,
#    test_gpu_consistency and test_gpu_backward failed on an H100 reading the poison where the tests' own
#    layout put fwd_work and bwd_order).
# 2. Table D's pair and 3. the acceptance ratios in both modes, as dev/sessions/sixty-ninth_queued.sh does
#    (what to do with the files: its header). Predicted on an H200 from the H100 runs since rule J (364.7-366.2
#    TFLOP/s, 0.845-0.864x): backward ~365-380 TFLOP/s at 16x4096, training call ~0.84-0.88x cuDNN BF16,
#    4 of 9 ahead of the fastest peer.
# At most 8 files come back from $OUT: the tests' tarball and the ratios' logs go into one (logs.tgz), so
# logs.tgz, Table D's two files, the two ratios files and the caller's run.log come back.
bash dev/sessions/sixty-ninth_queued.sh
rc=$?
(cd "${OUT:-/tmp/flamia-out}" && tar -czf logs.tgz tests.tgz ratios_mxfp8_*.log && rm -f tests.tgz ratios_mxfp8_*.log)
exit $rc
