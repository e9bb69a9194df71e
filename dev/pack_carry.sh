#!/bin/sh
# dev/pack_carry.sh DIR... - pack ignored build outputs (variant libraries, dev/*/bin) into
# build-pack/pack.tar.xz, for a device call whose carry would pass the 64 MiB limit: the fatbins
# compress ~4x (build-v129 + build-v130 + dev/forward/bin: 47 MB -> 11 MB). Carry build-pack; the
# device command unpacks it with dev_unpack_carry (dev/device_lib.sh) before it runs.
set -e
[ $# -gt 0 ] || { echo "usage: dev/pack_carry.sh DIR..." >&2; exit 2; }
mkdir -p build-pack
tar -cJf build-pack/pack.tar.xz "$@"
ls -la build-pack/pack.tar.xz
