export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
for args in "--workloads 8192+32x256,300+40+7,2x1000+100,3x256+64,1x200+1x256 --heads 16" "--workloads 300+40+7,1x200+1x256,3x256+64 --heads 1"; do
build/experiments/packed_memory --backend cuda $args --recipes mxfp8,mxfp8-exact,bf16 --warmup 0 --iters 1 --out /tmp/x.h5 --quiet 2>&1 | cut -c1-150
rm -rf /tmp/xt; build/experiments/h5totsv /tmp/x.h5 /tmp/xt >/dev/null; cut -f1,2,5,11,17- /tmp/xt/packed_memory.tsv
done
