#!/bin/bash
# Prepared in the twenty-second session for the next one (~4 min with dev/backward/bin
# carried): dev/backward/v49_ckq_table.patch (mxfp8's S factor 2^eK c once a tile in shared
# memory instead of 16 FMUL a sub-step; exact; prediction in the patch's header), by
# dev/backward/probe.sh: bytes, the default mode against the reference, timing, then the
# backward's gpu tests with v49 applied. Promote only if the bytes are the same, the checks
# and tests pass, and the backward is faster beyond the drift between rounds.
# Usage (device, repo root): bash dev/twentythird_bwd.sh > $OUT/run.log 2>&1
exec env SUITE_WITH=v49_ckq_table bash dev/backward/probe.sh v49_ckq_table
