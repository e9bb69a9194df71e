#!/bin/bash
# Twenty-second session, device command at aea7ad6 (log dev/logs/twentysecond_bwd.log): two
# exact changes to the backward's sub-step against the head, mxfp8 and mxfp8-exact timed:
# dev/backward/v46_mk_lane0.patch (mxfp8's dK partial exponent from lane 0; promoted, 4bcd351)
# and dev/backward/v47_no_pair_barrier.patch (v46 plus the pair's-G barrier removed;
# rejected). The same steps as dev/backward/probe.sh without its test part (this script
# held them inline before probe.sh was made generic); outputs then to the log directly.
# Usage (device, repo root, at aea7ad6): bash dev/sessions/twentysecond_bwd.sh > $OUT/bwd.log 2>&1
exec env TKINDS="mxfp8 exact" bash dev/backward/probe.sh v46_mk_lane0 v47_no_pair_barrier
