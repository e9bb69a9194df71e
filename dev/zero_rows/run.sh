#!/bin/bash
# Build (here or on the device) and run dev/zero_rows/probe.c against build/kernels/libflamia.so.
set -e
cd "$(dirname "$0")/../.."
gcc -O1 -std=c11 -o /tmp/zero_rows_probe dev/zero_rows/probe.c -Ikernels/include -Ikernels/formats \
  -I/usr/local/cuda/include -Lbuild/kernels -lflamia -L/usr/local/cuda/lib64 -lcudart -lm -Wl,-rpath,$PWD/build/kernels
/tmp/zero_rows_probe
