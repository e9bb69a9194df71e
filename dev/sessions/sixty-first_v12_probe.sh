#!/bin/bash
# Prepared in the sixty-first session (no device time left), to run next: what holds the training
# call's quantize at 74 % of the H100's bandwidth after v10 (652 us for ~1.6 GB at 16x4096)? The
# suspect: Q^T, K^T and V^T (~400 MB) are written as 32-byte pieces of rows t_vpad bytes apart.
# Two timing-only probes (their Q^T and K^T are wrong; the rest of the step runs on them):
#   v12a (dev/quantize/v12a_probe_tr_skip.patch): no Q^T / K^T stores (268 MB fewer writes);
#   v12b (v12b_probe_tr_contiguous.patch): the same bytes, each warp's 4 KB piece contiguous.
# Count: at the base's rate, 268 MB fewer bytes take 652 * 1.34 / 1.61 = ~543 us (v12a), and v12b
# equals the base. Predicted if the 32-byte pieces are the cap: v12a < 520 us, v12b <= 600 us.
# Decision: v12b <= 600 us (-8 %) -> design a blocked Q^T / K^T layout the backward's TMA can
# read; v12b within 3 % of the base -> the pattern is not the cap, quantize stays as it is.
# Needs no device build: carry build-carry (bash dev/carry_bins.sh), build-v12a and build-v12b
# (bash dev/variant_lib_here.sh dev/quantize/v12a_probe_tr_skip.patch build-v12a, the same
# for v12b). ~60 s on a fresh machine.
# Never run in the sixty-first session (no device time left); the sixty-second session's command
# runs the same ncu loop with v12c beside the probes, so this one only asks it for the probes.
# Usage (device, repo root): bash dev/sessions/sixty-first_v12_probe.sh
AB=0 TESTS= CFGS="base v12a v12b" exec bash dev/sessions/sixty-second_v12.sh
