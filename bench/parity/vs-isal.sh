#!/bin/sh
# raidlab's parity kernels side by side with ISA-L's xor_gen / pq_gen: one core, the same
# page-aligned buffers, alternating in short rounds within one process. Prints GB/s of data
# (decimal) and the ratio raidlab/ISA-L, for the best round and for the totals.
#
# Usage: bench/parity/vs-isal.sh [--data-disks 8] [--chunk 65536] [--seconds 4] [--stagger 0] [--kernel NAME] [--isal auto|avx512|avx2|sse]
# Needs libisal (Debian: libisal-dev). CPU: the last one (taskset), override with CPU=n.
set -eu
cd "$(dirname "$0")/../.."
if ! [ -e /usr/include/isa-l/raid.h ] && ! ldconfig -p 2>/dev/null | grep -q libisal; then
    echo "vs-isal.sh: ISA-L not found (install the Debian package libisal-dev)" >&2
    exit 2
fi
cargo build --quiet --release -p raidlab-parity --example vs_isal
cpu=${CPU:-$(( $(nproc) - 1 ))}
exec taskset -c "$cpu" target/release/examples/vs_isal "$@"
