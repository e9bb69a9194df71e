#!/bin/bash
# Twenty-second session, device command at c48d865 (log dev/logs/twentysecond_bwd2*.log):
# dev/backward/v48_amax_block.patch (promoted afterwards, 68dfea0) against the head, the same
# steps as dev/backward/probe.sh (which this script held before it was made generic; its
# outputs went to $OUT/bwd2.log and $OUT/suite.log). At c48d865:
#   SUITE_WITH=v48_amax_block bash dev/backward/probe.sh v48_amax_block > $OUT/run.log 2>&1
exec env SUITE_WITH=v48_amax_block bash dev/backward/probe.sh v48_amax_block
