#!/usr/bin/env bash
# `raidlab run --mpi` with two ranks on this host against one process running the same two
# jobs (numjobs=2) and against fio's numjobs=2 (two processes, the nearest peer: IOR is not
# packaged for Debian), side by side: the three alternate, ROUNDS times, on a loop device
# over a /dev/shm file (--direct-io=on), each job reading its own half with offset_increment,
# group_reporting on. Prints each one's median aggregate IOPS and the ratios to fio. What it
# shows: what the meetings and the results' trip to rank 0 cost a run (nothing measurable
# during a group: the ranks meet only between groups).
#
#   bench/engine/mpi-ranks.sh
#   ROUNDS=5 RUNTIME=5 bench/engine/mpi-ranks.sh
#
# Needs root, mpirun (openmpi-bin), fio, losetup, python3.
set -euo pipefail
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-4}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RAIDLAB=${RAIDLAB:-$ROOT/target/release/raidlab}
[ -x "$RAIDLAB" ] || (cd "$ROOT" && cargo build --release -q -p raidlab)
for t in mpirun fio losetup python3; do
  command -v $t >/dev/null || { echo "mpi-ranks: $t is not installed" >&2; exit 2; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
WORK=$(mktemp -d /dev/shm/raidlab-bench.XXXXXX)
LOOP=""
cleanup() { [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
dd if=/dev/urandom of="$WORK/backing" bs=1M count=1024 status=none
LOOP=$(losetup --find --show --direct-io=on "$WORK/backing")
JOB="--rw=randread --bs=4k --iodepth=16 --ioengine=io_uring --direct=1 --size=512m
     --offset_increment=512m --time_based --runtime=$RUNTIME --group_reporting"
iops() { python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print(round(j["read"]["iops"]))'; }
: > "$WORK/rounds"
for r in $(seq "$ROUNDS"); do
  f=$(fio --name=j --filename="$LOOP" $JOB --numjobs=2 --output-format=json | iops)
  one=$("$RAIDLAB" run --name=j --filename="$LOOP" $JOB --numjobs=2 --output-format=json | iops)
  mpi=$(mpirun -q -np 2 "$RAIDLAB" run --mpi --name=j --filename="$LOOP" $JOB --output-format=json | iops)
  echo "$f $one $mpi" >> "$WORK/rounds"
  echo "round $r: fio numjobs=2 $f, raidlab numjobs=2 $one, raidlab --mpi 2 ranks $mpi IOPS"
done
python3 - "$WORK/rounds" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
f, one, mpi = (statistics.median(c) for c in zip(*rows))
print(f"medians: fio {f:.0f}, raidlab numjobs=2 {one:.0f} ({one/f:.3f}x fio), "
      f"raidlab --mpi {mpi:.0f} ({mpi/f:.3f}x fio, {mpi/one:.3f}x one process)")
PY
