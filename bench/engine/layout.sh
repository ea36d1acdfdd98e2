#!/usr/bin/env bash
# Laying a file out, raidlab against fio, side by side: each tool creates a SIZE file for a
# reading job (create_only=1: the layout and nothing else), the new file removed before each
# run, under hyperfine, which prints each command's mean and the ratio. Both write the job's
# buffer content block by block (random bytes, every block its own); the file lives in
# /dev/shm, so what is timed is the tools' own work (filling buffers, writing them, the
# final sync), not a disk.
#
#   bench/engine/layout.sh
#   SIZE=4g RUNS=5 bench/engine/layout.sh
#
# Needs hyperfine and fio (Debian packages).
set -euo pipefail
SIZE=${SIZE:-1g}
RUNS=${RUNS:-10}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RAIDLAB=${RAIDLAB:-$ROOT/target/release/raidlab}
[ -x "$RAIDLAB" ] || (cd "$ROOT" && cargo build --release -q -p raidlab)
for t in hyperfine fio; do
  command -v $t >/dev/null || { echo "layout: $t is not installed" >&2; exit 2; }
done
WORK=$(mktemp -d /dev/shm/raidlab-layout.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
F="$WORK/f"
hyperfine --runs "$RUNS" --warmup 1 --prepare "rm -f $F" \
  -n raidlab "$RAIDLAB run --name=l --filename=$F --rw=read --bs=4k --size=$SIZE --create_only=1" \
  -n fio "fio --name=l --filename=$F --rw=read --bs=4k --size=$SIZE --create_only=1"
