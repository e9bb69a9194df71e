#!/usr/bin/env bash
# test.sh [suite] - configures build/ if needed, builds, runs a meson test suite
# (default: cpu, the CI suite; 'gpu' needs an sm_90 GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:-cpu}
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
[ -f build/build.ninja ] || meson setup build
meson compile -C build
meson test -C build --suite "$suite" --print-errorlogs
