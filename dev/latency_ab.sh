#!/bin/bash
# dev/latency_ab.sh - A/B timing of library builds or switches with the latency driver (device).
# Each configuration runs one driver process per workload and round, the configurations
# alternated inside every (round, workload), so drifting clocks hit all alike; then a table of
# the mean ms per (workload, system, pass) and configuration, each configuration's ratio to the
# first, and the driver's verification per configuration.
# Environment:
#   CONFIGS    "name=SPEC name=SPEC ..." (names: letters and digits). SPEC is a comma list of
#              VAR=VALUE settings for the driver; LIB=DIR puts DIR first on LD_LIBRARY_PATH (a
#              libflamia.so built elsewhere: RUNPATH comes after it); an empty SPEC runs the
#              tree's build as it is. Example: "head=LIB=build/headlib off=FLAMIA_SM90_QKT=bwd on="
#   WORKLOADS  (default "16x4096 64x1024 logu-16k"), RECIPES (mxfp8), PASSES (fwd,train),
#   ROUNDS (2), BUDGET (seconds per pass, 2), DRIVER (build/experiments/latency/latency),
#   OUTDIR (/tmp/latency_ab; emptied first)
# Usage (device, repo root): CONFIGS="..." bash dev/latency_ab.sh
set -u
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
WORKLOADS=${WORKLOADS:-"16x4096 64x1024 logu-16k"} RECIPES=${RECIPES:-mxfp8} PASSES=${PASSES:-fwd,train}
ROUNDS=${ROUNDS:-2} BUDGET=${BUDGET:-2} DRIVER=${DRIVER:-build/experiments/latency/latency}
OUTDIR=${OUTDIR:-/tmp/latency_ab}
rm -rf "$OUTDIR" && mkdir -p "$OUTDIR"
names=""
for c in $CONFIGS; do names="$names ${c%%=*}"; done
run() { # name spec workload round
  local env=() lib="" kv
  IFS=, read -ra kvs <<<"$2"
  for kv in "${kvs[@]}"; do
    case $kv in LIB=*) lib=$(cd "${kv#LIB=}" && pwd) ;; ?*=*) env+=("$kv") ;; esac
  done
  env ${lib:+LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH} "${env[@]}" timeout 300 "$DRIVER" --workloads "$3" \
    --recipes "$RECIPES" --passes "$PASSES" --pass-budget "$BUDGET" --out "$OUTDIR/$1__$3__$4.h5" \
    >>"$OUTDIR/latency.log" 2>&1 || echo "latency $1 $3 round $4 FAILED (rc $?)"
}
for r in $(seq 1 "$ROUNDS"); do
  for w in $WORKLOADS; do
    for c in $CONFIGS; do run "${c%%=*}" "${c#*=}" "$w" "$r"; done
  done
done
echo "== $ROUNDS rounds in $SECONDS s (driver log $OUTDIR/latency.log)"
python3 - "$OUTDIR" $names <<'PY'
import sys, glob, h5py, collections
out, names = sys.argv[1], sys.argv[2:]
ms, ver, keys = collections.defaultdict(list), collections.defaultdict(list), []
for fn in sorted(glob.glob(out + "/*.h5")):
    c, w, r = fn.split("/")[-1][:-3].split("__")
    f = h5py.File(fn, "r"); t = f["timings"]
    for j in range(t["pass"].shape[0]):
        k = (t["workload"][j].decode(), t["system"][j].decode(), t["pass"][j].decode())
        if k not in keys: keys.append(k)
        ms[k + (c,)].append(float(t["ms"][j]))
    ver[c].append("ok" if all(f["verify"]["ok"][...]) else "FAIL:%s/%s" % (w, r))
mean = lambda v: sum(v) / len(v) if v else float("nan")
spread = lambda v: (max(v) - min(v)) / mean(v) * 100 if len(v) > 1 else 0.0
print("| workload | system | pass | " + " | ".join(n + " ms" for n in names) + " | " +
      " | ".join("%s / %s" % (n, names[0]) for n in names[1:]) + " | largest round spread |")
print("|---|---|---|" + "---|" * (2 * len(names)))
for k in keys:
    m = [mean(ms[k + (n,)]) for n in names]
    print("| %s | %s | %s | " % k + " | ".join("%.3f" % x for x in m) + " | " +
          " | ".join("%.3f" % (x / m[0]) for x in m[1:]) +
          " | %.1f %% |" % max(spread(ms[k + (n,)]) for n in names))
for n in names:
    print("  %s: verification %s" % (n, "ok in every run" if all(v == "ok" for v in ver[n]) else ver[n]))
PY
