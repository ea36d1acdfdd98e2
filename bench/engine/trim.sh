#!/usr/bin/env bash
# Trims, raidlab against fio, side by side: each tool discards a whole loop device (over a
# file in /dev/shm, --direct-io=on) in SIZE of BS random trims at iodepth DEPTH through
# io_uring (both do each trim as it is queued: the BLKDISCARD ioctl, which the loop driver
# turns into a punched hole in its backing file), under hyperfine, which prints each
# command's mean and the ratio. The backing file is allocated again before each run
# (fallocate), so every run releases the same pages.
#
#   bench/engine/trim.sh
#   SIZE=2g BS=1m RUNS=5 bench/engine/trim.sh
#
# Needs root, losetup, hyperfine and fio (Debian packages).
set -euo pipefail
SIZE=${SIZE:-512m}
BS=${BS:-64k}
DEPTH=${DEPTH:-4}
RUNS=${RUNS:-10}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RAIDLAB=${RAIDLAB:-$ROOT/target/release/raidlab}
[ -x "$RAIDLAB" ] || (cd "$ROOT" && cargo build --release -q -p raidlab)
for t in hyperfine fio losetup fallocate; do
  command -v $t >/dev/null || { echo "trim: $t is not installed" >&2; exit 2; }
done
WORK=$(mktemp -d /dev/shm/raidlab-trim.XXXXXX)
LOOP=""
HELD=()
cleanup() {
  for l in $LOOP "${HELD[@]}"; do losetup -d "$l" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
truncate -s "$SIZE" "$WORK/backing"
# A loop device whose discards were turned off through sysfs keeps them off until the machine
# restarts: such a device is held (attached) while the next free one is tried.
for _ in $(seq 16); do
  l=$(losetup -f --show --direct-io=on "$WORK/backing")
  if [ "$(cat /sys/block/"${l#/dev/}"/queue/discard_max_bytes)" != 0 ]; then LOOP=$l; break; fi
  HELD+=("$l")
done
[ -n "$LOOP" ] || { echo "trim: no loop device takes discards (${HELD[*]} have discard_max_bytes 0)" >&2; exit 2; }
JOB="--name=t --filename=$LOOP --rw=randtrim --bs=$BS --size=$SIZE --iodepth=$DEPTH --ioengine=io_uring"
hyperfine --runs "$RUNS" --warmup 1 --prepare "fallocate -l $SIZE $WORK/backing" \
  -n raidlab "$RAIDLAB run $JOB --force --output-format=json" \
  -n fio "fio $JOB --output-format=json"
