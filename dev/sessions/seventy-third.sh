#!/bin/bash
# Seventy-third session. The seventy-second session's steps (dev/sessions/seventy-second.sh), with
# the variants' binaries carried packed: build-carry, .whl and build-v129 + build-v130 +
# dev/forward/bin together passed the 64 MiB carry limit, so `bash dev/pack_carry.sh build-v129
# build-v130 dev/forward/bin` packs the last three into build-pack (11 MB) and this script unpacks
# them first. Carry build-carry and build-pack (and .whl for h200). Pass FLAMIA_GIT_COMMIT=<hash>.
# v131_skip_and_tma_store is v129 and v130 together (build-v131 packed with them): FWD_VARIANTS="v129_masked_blocks_skip
# v130_o_tma_store v131_skip_and_tma_store" TEST_VARIANTS=v131_skip_and_tma_store runs the gpu tests on the pair's library
# only (its code holds both patches), keeping the step inside a call's 10 minutes.
# Usage: bash dev/sessions/seventy-third.sh [steps of seventy-second.sh]
. dev/device_lib.sh
dev_unpack_carry
bash dev/sessions/seventy-second.sh "$@"
