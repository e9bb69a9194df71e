# dev/device_lib.sh - the pieces every dev/ device command repeats; source it from the repo
# root (`. dev/device_lib.sh`). Sets OUT (default /tmp/flamia-out), B (the build folder), LOG,
# t0 (the start, for dev_elapsed) and the run path to cuBLAS (the FP64 oracle and its tests).
# The older dev/*_first.sh scripts keep their own copies: they are the record of what ran.
OUT=${OUT:-/tmp/flamia-out}
B=build-device
LOG=/tmp/flamia-build.log
t0=$(date +%s)
mkdir -p "$OUT"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64

dev_elapsed() { echo $(( $(date +%s) - t0 )); }
# build (or rebuild) $B; on failure the first errors and status 1
dev_build() { ninja -C $B >>$LOG 2>&1 || { grep -E "error|FAILED" -A3 $LOG | head -40; return 1; }; }
# the GPU's name, driver and top clock (the first line of every device command's log), then
# configure $B (release, CUDA and the experiments) unless a call before did, and build it;
# exits the script on failure
dev_setup() {
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  if [ ! -f $B/build.ninja ]; then
    meson setup $B -Dcuda=enabled -Dexperiments=enabled --buildtype=release >$LOG 2>&1 || { tail -30 $LOG; exit 1; }
  fi
  dev_build || exit 1
  echo "build ok ($(dev_elapsed) s)"
}
# dev_variant_tree DIR PATCH: a copy of the tree in DIR (no build folders, .git or data/runs)
# with PATCH (a path inside the tree) applied; status 1 when it does not apply
dev_variant_tree() {
  rm -rf "$1" && mkdir -p "$1" &&
    tar --exclude='./build*' --exclude=./.git --exclude=./data/runs -cf - . | tar -xf - -C "$1" &&
    (cd "$1" && patch -p1 -s < "$2") || { echo "$2 does not apply"; return 1; }
}
# dev_variant_lib DIR PATCH: DIR/libflamia.so, the library of the tree with PATCH applied, unless
# one was carried there (built on the CPU machine); exits the script when it does not build
dev_variant_lib() {
  local n
  n=$(basename "$1")
  [ -f "$1/libflamia.so" ] && return 0
  dev_variant_tree "/tmp/$n-src" "$2" || exit 1
  (cd "/tmp/$n-src" && meson setup build -Dcuda=enabled --buildtype=release >"/tmp/$n.log" 2>&1 &&
     ninja -C build kernels/libflamia.so >>"/tmp/$n.log" 2>&1) || { tail -20 "/tmp/$n.log"; exit 1; }
  mkdir -p "$1" && cp "/tmp/$n-src/build/kernels/libflamia.so" "$1/"
  echo "$n built ($(dev_elapsed) s)"
}
# dev_unpack_carry: what dev/pack_carry.sh packed into build-pack/pack.tar.xz, unpacked in place;
# nothing when no pack was carried
dev_unpack_carry() {
  [ -f build-pack/pack.tar.xz ] || return 0
  tar -xJf build-pack/pack.tar.xz && echo "unpacked build-pack ($(dev_elapsed) s)"
}
# dev_cudnn_frontend: cuDNN's Python frontend (the cudnn-fp8 peer) from the carried wheel in
# .whl/, installed into /tmp/site-cudnn and put on PYTHONPATH; nothing when no wheel was carried
dev_cudnn_frontend() {
  ls .whl/nvidia_cudnn_frontend-*.whl >/dev/null 2>&1 || return 0
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site-cudnn \
    .whl/nvidia_cudnn_frontend-*.whl && export PYTHONPATH=/tmp/site-cudnn${PYTHONPATH:+:$PYTHONPATH}
}
# dev_gpu_suite: the gpu suite of $B one test at a time, its log as $OUT/testlog.txt, a line a
# test (name, result, seconds) and the first failures printed; status 1 when a test failed
dev_gpu_suite() {
  local rc=0
  meson test -C $B --suite gpu --print-errorlogs --num-processes 1 >/dev/null 2>&1 || rc=1
  cp $B/meson-logs/testlog.txt "$OUT/testlog.txt"
  grep -E "^(test|result|duration): " "$OUT/testlog.txt" | paste - - - | awk '{print $4, $6, $8, $9, $10}'
  grep -hE "^FAIL|failures" "$OUT/testlog.txt" | cut -c1-200 | head -20
  return $rc
}
# dev_bwd_probe_table DIR TAG=LABEL...: the mxfp8 backward's median ms per workload of
# DIR/default.h5 (the default kernel) and, per TAG, DIR/pTAG.h5 with its cost against it
# (latency --passes bwd files; a missing file is listed as such)
dev_bwd_probe_table() {
  python3 - "$@" <<'PY'
import sys, os, h5py
d, specs = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
def load(f):
    t = h5py.File(f, "r")["timings"]
    return {w.decode(): ms for w, s, ms in zip(t["workload"][...], t["system"][...], t["ms"][...])
            if s.decode() in ("flamia-mxfp8", "flamia-mxfp8-det")}
base = load(d + "/default.h5")
print("%-26s" % "backward ms (mxfp8)" + "".join("%18s" % w for w in base))
print("%-26s" % "default" + "".join("%18.3f" % v for v in base.values()))
for tag, label in specs:
    f = "%s/p%s.h5" % (d, tag)
    if not os.path.exists(f):
        print("%-26s missing" % label)
        continue
    r = load(f)
    print("%-26s" % label + "".join("%10.3f %+6.1f%%" % (r[w], 100 * (r[w] / base[w] - 1)) if w in r else "%18s" % "-"
                                    for w in base))
PY
}
# dev_order_ab WORKLOADS [TIMEOUT_S]: ours alone (ratios.py) with the backward's launch order off
# (FLAMIA_SM90_BWD_ORDER=0) and on (=2), alternated by process, 2 rounds; logs and HDF5 into $OUT
# as gqa_order{0,2}_r{1,2}.*, each process's bwd / train rows printed with its mode and round
dev_order_ab() {
  local r mode
  for r in 1 2; do
    for mode in 0 2; do
      FLAMIA_LIB=$B/kernels/libflamia.so FLAMIA_SM90_BWD_ORDER=$mode PYTHONUNBUFFERED=1 timeout ${2:-150} \
        python3 experiments/latency/ratios.py --systems "" --workloads "$1" --rounds 1 \
        --out "$OUT/gqa_order${mode}_r$r.h5" > "$OUT/gqa_order${mode}_r$r.log" 2>&1
      echo "order=$mode round $r: rc=$?"
      grep -E "^\| gqa.*\| (bwd|train) " "$OUT/gqa_order${mode}_r$r.log" | sed "s/^/order=$mode r$r /"
    done
  done
}
# dev_gpu_tests BIN LOGDIR TEST...: each gpu test program BIN/TEST (200 s each), its rc, time and
# last line; its log LOGDIR/TEST.log; then the dQ paths test_gpu_backward took, counted
dev_gpu_tests() {
  local bin=$1 logs=$2 t s; shift 2
  mkdir -p "$logs"
  for t in "$@"; do
    s=$(date +%s); timeout 200 "$bin/$t" > "$logs/$t.log" 2>&1
    echo "$t rc=$? ($(( $(date +%s) - s )) s): $(tail -n 1 "$logs/$t.log" | cut -c1-150)"
  done
  [ -f "$logs/test_gpu_backward.log" ] && grep -oE "\| dQ [a-zA-Z0-9(), -]+$" "$logs/test_gpu_backward.log" | sort | uniq -c
  return 0
}
# dev_forward_tests_on LIBDIR LOGS: the forward's gpu test programs (carried, $C) with LIBDIR's
# libflamia.so first on the run path (a variant's library), the library they load printed first
dev_forward_tests_on() {
  echo "== the forward's gpu tests on $(LD_LIBRARY_PATH=$1:$LD_LIBRARY_PATH ldd $C/tests/gpu/test_gpu_forward |
    awk '/libflamia/ {print $3}')"
  LD_LIBRARY_PATH=$1:$LD_LIBRARY_PATH dev_gpu_tests $C/tests/gpu "$2" test_gpu_forward test_gpu_consistency \
    test_gpu_leak test_gpu_padded test_gpu_api
}
# dev_medians LOG: each build's median TFLOP/s a workload over the mxfp8 timing lines of a compare.sh LOG
dev_medians() {
  grep "^mxfp8 " "$1" | awk '{print $2, $3, $(NF-2)}' | sort -k1,1 -k2,2 -k3,3n |
    awk '{k=$1" "$2; v[k]=v[k]" "$3; n[k]++} END {for (k in v) {split(substr(v[k],2),a," "); print k, "median", a[int((n[k]+1)/2)], "of", n[k]}}' | sort
}
# dev_forward_timing NAME BIN...: the forward of each build (dev/forward/bin/BIN, the first the base) timed
# on 16x4096, 64x1024 and 16x1024, all builds alternated, REPS times (compare.sh's default: twice;
# $OUT/NAME_timing.log), then each build's median TFLOP/s a workload
dev_forward_timing() {
  local name=$1; shift
  CHECK=0 BYTES=0 WORKLOADS="16x4096 16 16 1|64x1024 16 16 1|16x1024 16 16 1" bash dev/forward/compare.sh "$@" \
    > $OUT/${name}_timing.log 2>&1
  echo "timing rc=$? ($(dev_elapsed) s)"
  dev_medians $OUT/${name}_timing.log
}
# dev_forward_probes NAME BIN...: forward probes (wrong outputs: timing only) beside the first BIN, the
# base: the GPU, then dev_forward_timing with three rounds
dev_forward_probes() {
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  REPS=3 dev_forward_timing "$@"
}
# dev_forward_lean NAME LIBDIR BIN...: forward variants (dev/forward/bin/BIN, the first the base)
# in the order that matters if the call is cut: dev_forward_timing; then the reference checks and
# bytes (compare.sh on one small timed layout, $OUT/NAME_checks.log, summarized); then the forward's
# gpu tests on LIBDIR's library (LIBDIR "-": none)
dev_forward_lean() {
  local name=$1 lib=$2; shift 2
  dev_forward_timing "$name" "$@"
  WORKLOADS="rand3000:1 4 2 1" bash dev/forward/compare.sh "$@" 2>&1 | grep -v "^mxfp8 " > $OUT/${name}_checks.log
  grep -cE "PASS" $OUT/${name}_checks.log | sed 's/^/PASS lines: /'
  grep -E "FAIL|DIFFERS" $OUT/${name}_checks.log | cut -c1-200
  grep -c "same bytes" $OUT/${name}_checks.log | sed 's/^/same-bytes lines: /'
  echo "checks done ($(dev_elapsed) s)"
  [ "$lib" = - ] || dev_forward_tests_on "$lib" $OUT/logs
}
# dev_carry: the environment of a command that runs carried binaries (build-carry, from
# `bash dev/carry_bins.sh`): C, the run paths, OUT/logs; prints the GPU's name, driver and top clock
dev_carry() {
  export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
  export LD_LIBRARY_PATH=$PWD/build-carry/kernels:/usr/local/cuda/lib64
  C=build-carry
  mkdir -p "$OUT/logs"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
}
# dev_all_gpu_tests: every gpu test program, carried ($C), logs in $OUT/logs
dev_all_gpu_tests() {
  dev_gpu_tests $C/tests/gpu $OUT/logs test_gpu_backward test_gpu_api test_gpu_forward test_gpu_quantize test_gpu_leak \
    test_gpu_consistency test_gpu_ref64 test_gpu_padded test_gpu_scale_shift test_gpu_e4m3_cvt
}
# dev_table_d: Table D's pair (pipelines/config.yaml deterministic_default / deterministic_on) into $OUT
dev_table_d() {
  local d="--workloads 4x4096,16x4096,8192+224x256,gqa-16x1024 --recipes mxfp8,mxfp8-exact --passes bwd --warmup 3 --iters 20 --verify-rows 0 --quiet"
  timeout 150 $C/experiments/latency/latency --backend cuda $d --out $OUT/deterministic_default.h5 > /dev/null 2>&1
  echo "table D default rc=$?"
  timeout 150 $C/experiments/latency/latency --backend cuda $d --deterministic --out $OUT/deterministic_on.h5 > /dev/null 2>&1
  echo "table D deterministic rc=$?"
}
# dev_lat_ab W SETUP NAME...: the latency driver (carried) on the arguments W once per NAME, in the
# order given, each after `SETUP NAME` (a function of the script that exports that variant's
# environment), into $OUT/logs/lat_NAME.{h5,log}; for dev/sessions/ab_table.py
dev_lat_ab() {
  local w=$1 setup=$2 m; shift 2
  for m in "$@"; do
    "$setup" "$m"
    timeout 150 $C/experiments/latency/latency --backend cuda $w --out $OUT/logs/lat_$m.h5 > $OUT/logs/lat_$m.log 2>&1
    echo "latency $m rc=$? ($(dev_elapsed) s)"
  done
}

# dev_first_checks BIN ARGS...: each ARGS (one quoted string) a check_forward run of BIN; a failure or a hang
# (30 s) stops the caller's step at once, before any timed run could spend 40 s on it
dev_first_checks() {
  local bin=$1 a rc; shift
  for a in "$@"; do
    timeout 30 dev/forward/bin/$bin $a 2>&1 | tail -1 | cut -c1-220
    rc=${PIPESTATUS[0]}; echo "$bin $a: rc=$rc"
    [ $rc = 0 ] || { echo "$bin failed its first check: step stopped"; return 1; }
  done
}
# dev_timeline_runs BIN TAG [FLAGS]: BIN's stamps (FWD_TIMELINE_OUT) on three workloads, the committed harness
# timed beside it, each summarized by dev/forward/timeline.py FLAGS ($OUT/TAG_W.bin, .md)
dev_timeline_runs() {
  local bin=$1 tag=$2 flags=$3 w
  for w in 64x1024 16x1024 16x4096; do
    FWD_TIMELINE_OUT=$OUT/${tag}_$w.bin timeout 60 dev/forward/bin/$bin mxfp8 $w 16 16 1 none 10 2>&1 |
      tail -1 | grep -o "| [0-9.]* ms.*" | sed "s/^/$bin $w /"
    timeout 60 dev/forward/bin/check_forward mxfp8 $w 16 16 1 none 10 2>&1 | tail -1 | grep -o "| [0-9.]* ms.*" | sed "s/^/HEAD $w /"
    echo "== $w"
    python3 dev/forward/timeline.py $flags $OUT/${tag}_$w.bin | tee $OUT/${tag}_$w.md
  done
}
# (seventy-ninth session, shared since the eightieth) the backward dev harness's ncu pages and sanitizers;
# both read CALL_S (the call's seconds) and write under $OUT
# dev_bwd_ncu_pages MIN_S BIN:WORKLOAD...: ncu's SASS source page of one bwd_main_fp8 launch of each run (mxfp8,
# clocks not locked), $OUT/ncu_sass_BIN_WORKLOAD.csv.gz, with dev/ncu_phases.py's landmark listing, each while
# MIN_S seconds of CALL_S are left
dev_bwd_ncu_pages() {
  local min=$1 run s S="--clock-control none -c 1 --section SourceCounters --page source --csv --print-source sass"
  shift
  for run in "$@"; do
    set -- ${run/:/ }
    [ $(( CALL_S - $(dev_elapsed) )) -gt $min ] || { echo "phases $run: no time left"; break; }
    s=$(dev_elapsed)
    GPU_FWD=1 timeout 150 ncu $S -k regex:bwd_main_fp8 -s 2 dev/backward/bin/$1 mxfp8 $2 16 16 1 none 3 \
      > $OUT/ncu_sass_$1_$2.csv 2>/dev/null; echo "== phases $run: ncu rc=$? ($(( $(dev_elapsed) - s )) s)"
    python3 dev/ncu_phases.py $OUT/ncu_sass_$1_$2.csv > $OUT/ncu_phases_$1_$2.txt
    TOP=25 python3 dev/ncu_phases.py $OUT/ncu_sass_$1_$2.csv >> $OUT/ncu_phases_$1_$2.txt
    head -60 $OUT/ncu_phases_$1_$2.txt
    gzip -f $OUT/ncu_sass_$1_$2.csv
  done
}
# dev_bwd_sanitizers BIN TAG MIN_S: racecheck and synccheck on BIN (the deterministic mode's split dQ, a small
# packed layout, both recipes), each while MIN_S seconds of CALL_S are left; logs $OUT/TAG_TOOL_KIND.log
dev_bwd_sanitizers() {
  local k tool
  for k in mxfp8 exact; do
    for tool in racecheck synccheck; do
      [ $(( CALL_S - $(dev_elapsed) )) -gt $3 ] || { echo "$tool $k: no time left"; continue; }
      BWD_DET=1 timeout 120 compute-sanitizer --tool $tool dev/backward/bin/$1 $k "rand700:3" 2 1 1 none 1 \
        > $OUT/$2_${tool}_$k.log 2>&1
      echo "$tool $k: rc=$? $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" $OUT/$2_${tool}_$k.log | tail -2 | tr '\n' ' ')"
    done
  done
}
# dev_bwd_compare TAG WORKLOADS BASE ... NEW: compare.sh on the builds (bytes and checks on both recipes, two
# timing rounds, mxfp8, WORKLOADS as compare.sh takes them), two more timing rounds of BASE and NEW, then each
# build's timings per workload, sorted; the log is $OUT/TAG_compare.log, its result lines whole (every
# gradient's relL2 / max / cosine; the lines shown here are cut at 200 characters)
dev_bwd_compare() {
  local tag=$1 work=$2
  shift 2
  FULL_LINES=1 KINDS="mxfp8 exact" TKINDS=mxfp8 WORKLOADS="$work" bash dev/backward/compare.sh "$@" 2>&1 |
    tee $OUT/${tag}_compare.log | grep -E "==|FAIL|^mxfp8" | cut -c1-200
  CHECK=0 TKINDS=mxfp8 WORKLOADS="$work" bash dev/backward/compare.sh "$1" "${@: -1}" 2>&1 |
    tee -a $OUT/${tag}_compare.log | grep "^mxfp8"
  dev_bwd_sorted $OUT/${tag}_compare.log mxfp8 "$work" "$@"
}
# dev_bwd_sorted LOG KIND WORKLOADS BIN...: each build's backward times (ms) a workload from compare.sh's
# timing lines in LOG, sorted (the median is read off them)
dev_bwd_sorted() {
  local log=$1 kind=$2 w b ws
  IFS='|' read -r -a ws <<< "$3"
  shift 3
  for w in "${ws[@]}"; do
    w=${w%% *}
    for b in "$@"; do
      echo "$w $b: $(grep "^$kind $b $w:" $log | awk '{print $5}' | sort -n | tr '\n' ' ')"
    done
  done
}
# dev_bwd_gradient_bytes BIN KIND LAYOUT HQ HKV CAUSAL: the committed harness (check_backward) and
# dev/backward/bin/BIN in the deterministic mode, their dumps (dQ, dK, dV as BF16) compared gradient by
# gradient (a variant that changes one gradient by design shows which keep their bytes)
dev_bwd_gradient_bytes() {
  local b new=$1
  shift
  for b in check_backward $new; do
    BWD_DET=1 BWD_DUMP=/tmp/bytes_$b.bin timeout 60 dev/backward/bin/$b "$@" none > /dev/null 2>&1
  done
  python3 - /tmp/bytes_check_backward.bin /tmp/bytes_$new.bin "$@" <<'EOF'
import sys
kind, layout, hq, hkv = sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
a = open(sys.argv[1], 'rb').read()
b = open(sys.argv[2], 'rb').read()
t = len(a) // (2 * 128 * (hq + 2 * hkv))
nq, nk = 2 * 128 * t * hq, 2 * 128 * t * hkv
parts = {'dQ': (0, nq), 'dK': (nq, nq + nk), 'dV': (nq + nk, nq + 2 * nk)}
same = {n: a[s:e] == b[s:e] for n, (s, e) in parts.items()}
print(f"bytes {kind} {layout}: " + ", ".join(f"{n} {'same' if v else 'DIFFERS'}" for n, v in same.items()) +
      f" (sizes {len(a)} {len(b)})")
EOF
}
# dev_bwd_variant_checks TAG BIN...: backward variants (dev/backward/bin/BIN, carried in build-pack) beside
# the committed harness check_backward: dev_bwd_compare on DEV_BWD_WORK (16x4096, 64x1024 and 16x1024),
# then the PASS / FAIL count
DEV_BWD_WORK="16x4096 16 16 1|64x1024 16 16 1|16x1024 16 16 1"
dev_bwd_variant_checks() {
  local tag=$1
  shift
  dev_unpack_carry
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  export OMP_NUM_THREADS=16
  dev_bwd_compare $tag "$DEV_BWD_WORK" check_backward "$@"
  echo "PASS lines: $(grep -c PASS $OUT/${tag}_compare.log), FAIL lines: $(grep -c FAIL $OUT/${tag}_compare.log)"
}
# dev_bwd_step_variants TAG BIN...: dev_bwd_variant_checks on the BINs (bytes, checks, two timing rounds, two more
# of the committed and the last BIN), two more rounds of every build, every build's times sorted, then
# racecheck and synccheck on each BIN in the order given while time is left; the sanitizers' logs (four a
# build) go back as one file ($OUT takes at most 8)
dev_bwd_step_variants() {
  local tag=$1 b
  shift
  dev_bwd_variant_checks $tag "$@"
  CHECK=0 TKINDS=mxfp8 WORKLOADS="$DEV_BWD_WORK" bash dev/backward/compare.sh check_backward "$@" 2>&1 |
    tee -a $OUT/${tag}_compare.log | grep "^mxfp8"
  echo "== every round, sorted (the committed and the last build six, the others four):"
  dev_bwd_sorted $OUT/${tag}_compare.log mxfp8 "$DEV_BWD_WORK" check_backward "$@"
  for b in "$@"; do dev_bwd_sanitizers $b ${tag}_san_${b#check_} 40; done
  (cd $OUT && ls ${tag}_san_* > /dev/null 2>&1 && tar czf ${tag}_sanitizers.tgz ${tag}_san_* && rm -f ${tag}_san_*)
}
# dev_bwd_variant TAG BIN: dev_bwd_variant_checks, then racecheck and synccheck (dev_bwd_sanitizers)
# while 40 s of CALL_S are left
dev_bwd_variant() {
  dev_bwd_variant_checks "$@"
  dev_bwd_sanitizers $2 $1 40
}
