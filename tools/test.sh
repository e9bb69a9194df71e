#!/usr/bin/env bash
# test.sh [suite] - configures build/ if needed, builds, runs a meson test suite
# (default: cpu, the CI suite; 'gpu' needs an sm_90 GPU).
#   test.sh sanitize  the cpu suite under AddressSanitizer + UndefinedBehaviorSanitizer
#                     (leaks included), CPU code only, in build-sanitize/ (CI runs it too)
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:-cpu}
if [ "$suite" = sanitize ]; then
  [ -f build-sanitize/build.ninja ] ||
    meson setup build-sanitize -Dcuda=disabled -Db_sanitize=address,undefined --buildtype=debugoptimized
  meson compile -C build-sanitize
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 meson test -C build-sanitize --suite cpu --print-errorlogs
  exit
fi
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
[ -f build/build.ninja ] || meson setup build
meson compile -C build
meson test -C build --suite "$suite" --print-errorlogs
