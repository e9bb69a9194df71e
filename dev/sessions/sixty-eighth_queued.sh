#!/bin/bash
# Queued by the sixty-seventh session (no H200 came since the sixty-first). Carry build-carry
# (bash dev/carry_bins.sh at the commit measured) and .whl (the cudnn-fp8 peer). Pass
# FLAMIA_GIT_COMMIT=<hash>. Best on an H200 (the acceptance GPU); on an H100 every step still tells.
# 1. Every gpu test program (since the sixty-seventh session: the host copy of cu_seqlens, rule I).
# 2. Table D's pair (pipelines/config.yaml deterministic_default / deterministic_on) into $OUT. The latency
#    driver now passes the host copy, so 8192+224x256's default column takes the split (Table D's cost
#    there moves from -14.5 % towards 0). On an H200: copy them to data/measured/h200/ and drop
#    data/measured/h100's pair (tables.smk reads the first folder with a pair, h100 first). On an H100:
#    they replace data/measured/h100's. Then `snakemake -c2 paper_tables/table_d_deterministic_cost.md`.
# 3. The acceptance ratios, the default mode then the deterministic one, 3 rounds each
#    (dev/sessions/sixty-fifth_ratios.sh; ratios.py passes the host copy). On an H200 the default run's
#    file becomes data/measured/h200/ratios_gpu.h5 (set its git_commit) and perf-notes "Where the targets
#    stand" takes its figures. Predicted from the H100 (sixty-seventh session: 365.6 TFLOP/s, 0.846x, packed
#    1.13-1.26x their fastest peer): on an H200 backward ~365-380 TFLOP/s at 16x4096 (336 at d8dca16),
#    training call ~0.84-0.87x cuDNN BF16 (0.818x), still 4 of 9 ahead of the fastest peer.
. dev/device_lib.sh
dev_carry
dev_gpu_tests $C/tests/gpu $OUT/logs test_gpu_backward test_gpu_api test_gpu_forward test_gpu_quantize test_gpu_leak \
  test_gpu_consistency test_gpu_ref64 test_gpu_padded test_gpu_scale_shift test_gpu_e4m3_cvt
D="--workloads 4x4096,16x4096,8192+224x256,gqa-16x1024 --recipes mxfp8,mxfp8-exact --passes bwd --warmup 3 --iters 20 --verify-rows 0 --quiet"
timeout 150 $C/experiments/latency/latency --backend cuda $D --out $OUT/deterministic_default.h5 > /dev/null 2>&1; echo "table D default rc=$?"
timeout 150 $C/experiments/latency/latency --backend cuda $D --deterministic --out $OUT/deterministic_on.h5 > /dev/null 2>&1; echo "table D deterministic rc=$?"
# 1b. The PyTorch example on the device's PyTorch: its checks with and without cu_seqlens_host= (new in the
#     sixty-seventh session, never run on a GPU), and the custom operators' test (its fake shape now ends
#     in the host copy's NULL)
python3 examples/torch_attention.py --lib $C/kernels/libflamia.so --op > $OUT/logs/torch_example.log 2>&1
echo "torch_attention.py --op rc=$?: $(grep -E "cu_seqlens_host|^ok|^FAIL" $OUT/logs/torch_example.log | tr '\n' ' ')"
python3 tests/cpu/test_torch_ops.py examples/torch_attention.py $C/kernels/libflamia.so > $OUT/logs/torch_ops.log 2>&1
echo "test_torch_ops.py rc=$?: $(tail -n 1 $OUT/logs/torch_ops.log)"
tar -C $OUT -czf $OUT/tests.tgz logs && rm -rf $OUT/logs
echo "tests done ($(dev_elapsed) s)"
MODES="default det" bash dev/sessions/sixty-fifth_ratios.sh
echo "done ($(dev_elapsed) s)"
