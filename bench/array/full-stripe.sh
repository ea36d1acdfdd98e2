#!/bin/sh
# Full-stripe sequential writes through a raidlab RAID 5 (8+1, 64 KiB chunks) of tmpfs-backed
# members vs. writing the same member bytes to the members directly, in one run.
# Usage: bench/array/full-stripe.sh [DIR=/dev/shm] [MEMBERS=9] [CHUNK=64k] [MEMBER_MIB=128] [PASSES=5] [STRIPES_PER_REQUEST=4] [IODEPTH=1]
# RAIDLAB_MEMBER_IO=auto|uring|uring-async|psync picks how the array does member I/O.
set -eu
cd "$(dirname "$0")/../.."
dir=${1:-/dev/shm}
cargo build --release -q -p raidlab-array --example full_stripe
exec target/release/examples/full_stripe "$dir" "${2:-9}" "${3:-64k}" "${4:-128}" "${5:-5}" "${6:-4}" "${7:-1}"
