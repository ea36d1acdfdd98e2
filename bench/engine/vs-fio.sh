#!/usr/bin/env bash
# raidlab's engine against fio, side by side in one run: the two tools alternate, ROUNDS
# times per case, and the script prints each tool's median IOPS, CPU (usr+sys, % of one core)
# and the ratios raidlab/fio of IOPS and of IOPS per core (IOPS / CPU fraction of the job's
# thread), then each round's IOPS. On a shared machine wall-clock IOPS swing with the load;
# IOPS per core is the steadier comparison of the two engines.
#
#   bench/engine/vs-fio.sh              # all cases
#   ROUNDS=5 RUNTIME=5 bench/engine/vs-fio.sh loop-randread null
#
# raidlab side: the engine's example front end (crates/engine/examples/rlrun.rs, the same
# raidlab_engine::run that `raidlab run` calls), or set RAIDLAB=target/release/raidlab to
# time the binary itself through its fio-compatible JSON.
#
# Cases: loop-randread (4 KiB randread, iodepth 32, io_uring, direct, on a loop device over a
# /dev/shm file with --direct-io=on), loop-psync (same with psync), loop-sync (same with
# sync: lseek and read), loop-libaio (same with libaio), loop-seqread (1 MiB
# sequential read, iodepth 32), loop-randwrite (4 KiB randwrite, iodepth 32), loop-randrw
# (8 KiB, half reads, iodepth 16), mmap-randread (4 KiB randread through a shared mapping of
# a 1 GiB file in /dev/shm, page cache hits: the copy and fault path), mmap-direct (the same
# on the loop device with direct=1: each request's pages dropped after it, so every request
# faults and reads the device), null (null engine, 4 KiB, iodepth 32), disk (4 KiB
# randread, iodepth 32, direct, on a file under /var/tmp). IOPS are reads and writes
# together. Needs root, fio, losetup, python3.
set -euo pipefail
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-4}
CASES=${*:-loop-randread loop-psync loop-sync loop-libaio loop-seqread loop-randwrite loop-randrw mmap-randread mmap-direct null disk}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RL=${RAIDLAB_RLRUN:-$ROOT/target/release/examples/rlrun}
if [ -z "${RAIDLAB_RLRUN:-}" ] && [ -z "${RAIDLAB:-}" ]; then
  (cd "$ROOT" && cargo build --release -q -p raidlab-engine --example rlrun)
fi
command -v fio >/dev/null || { echo "vs-fio: fio is not installed (apt-get install fio)" >&2; exit 2; }
WORK=$(mktemp -d /dev/shm/raidlab-bench.XXXXXX)
LOOP=""
cleanup() { [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null; rm -rf "$WORK"; rm -f /var/tmp/raidlab-bench.dat; }
trap cleanup EXIT

need_loop() {
  if [ -z "$LOOP" ]; then
    truncate -s 1G "$WORK/backing"
    dd if=/dev/urandom of="$WORK/backing" bs=1M count=1024 conv=notrunc status=none
    LOOP=$(losetup --find --show --direct-io=on "$WORK/backing")
  fi
}

# args: case -> sets TARGET and OPTS (fio-style, shared by both tools)
setup() {
  FORCE=""
  case "$1" in
    loop-randread) need_loop; TARGET=$LOOP; OPTS="--rw=randread --bs=4k --iodepth=32 --ioengine=io_uring --direct=1" ;;
    loop-psync)    need_loop; TARGET=$LOOP; OPTS="--rw=randread --bs=4k --iodepth=1 --ioengine=psync --direct=1" ;;
    loop-sync)     need_loop; TARGET=$LOOP; OPTS="--rw=randread --bs=4k --iodepth=1 --ioengine=sync --direct=1" ;;
    loop-libaio)   need_loop; TARGET=$LOOP; OPTS="--rw=randread --bs=4k --iodepth=32 --ioengine=libaio --direct=1" ;;
    loop-seqread)  need_loop; TARGET=$LOOP; OPTS="--rw=read --bs=1m --iodepth=32 --ioengine=io_uring --direct=1" ;;
    loop-randwrite) need_loop; TARGET=$LOOP; FORCE=--force; OPTS="--rw=randwrite --bs=4k --iodepth=32 --ioengine=io_uring --direct=1" ;;
    loop-randrw)   need_loop; TARGET=$LOOP; FORCE=--force; OPTS="--rw=randrw --bs=8k --iodepth=16 --ioengine=io_uring --direct=1" ;;
    mmap-randread) TARGET=$WORK/mapped
                   [ -f "$TARGET" ] || dd if=/dev/urandom of="$TARGET" bs=1M count=1024 status=none
                   OPTS="--rw=randread --bs=4k --iodepth=1 --ioengine=mmap --size=1g" ;;
    mmap-direct)   need_loop; TARGET=$LOOP; OPTS="--rw=randread --bs=4k --iodepth=1 --ioengine=mmap --direct=1" ;;
    null)          TARGET=$WORK/null; OPTS="--rw=randread --bs=4k --iodepth=32 --ioengine=null --size=1g" ;;
    disk)          TARGET=/var/tmp/raidlab-bench.dat
                   [ -f "$TARGET" ] || dd if=/dev/urandom of="$TARGET" bs=1M count=2048 status=none
                   OPTS="--rw=randread --bs=4k --iodepth=32 --ioengine=io_uring --direct=1 --size=2g" ;;
    *) echo "vs-fio: unknown case '$1' (valid: loop-randread loop-psync loop-sync loop-libaio loop-seqread loop-randwrite loop-randrw mmap-randread mmap-direct null disk)" >&2; exit 2 ;;
  esac
}

# prints "iops cpu%"
run_fio() {
  fio --name=b --filename="$TARGET" $OPTS --runtime="$RUNTIME" --time_based --output-format=json 2>/dev/null |
    python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print(j["read"]["iops"]+j["write"]["iops"], j["usr_cpu"]+j["sys_cpu"])'
}
run_rl() {
  if [ -n "${RAIDLAB:-}" ]; then
    "$RAIDLAB" run --name=b --filename="$TARGET" $OPTS $FORCE --runtime="$RUNTIME" --time_based --output-format=json |
      python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print(j["read"]["iops"]+j["write"]["iops"], j["usr_cpu"]+j["sys_cpu"])'
    return
  fi
  "$RL" --name=b --filename="$TARGET" $OPTS $FORCE --runtime="$RUNTIME" --time_based |
    python3 -c 'import re,sys; l=sys.stdin.read(); i=re.search(r"iops=([0-9.]+)",l).group(1); u=re.search(r"usr=([0-9.]+)%",l).group(1); s=re.search(r"sys=([0-9.]+)%",l).group(1); print(i, float(u)+float(s))'
}

printf "%-14s %12s %7s %12s %7s %8s %10s\n" case raidlab_iops cpu% fio_iops cpu% iops_x per_core_x
for c in $CASES; do
  setup "$c"
  RL_OUT=(); FIO_OUT=()
  for r in $(seq "$ROUNDS"); do
    RL_OUT+=("$(run_rl)")
    FIO_OUT+=("$(run_fio)")
  done
  python3 - "$c" "${#RL_OUT[@]}" "${RL_OUT[@]}" "${FIO_OUT[@]}" <<'PY'
import sys, statistics as st
case, n = sys.argv[1], int(sys.argv[2])
rl = [tuple(map(float, x.split())) for x in sys.argv[3:3+n]]
fi = [tuple(map(float, x.split())) for x in sys.argv[3+n:3+2*n]]
ri, rc = st.median(x[0] for x in rl), st.median(x[1] for x in rl)
fi_, fc = st.median(x[0] for x in fi), st.median(x[1] for x in fi)
pc = (ri / max(rc, 1e-9)) / (fi_ / max(fc, 1e-9))
print(f"{case:<14} {ri:12.0f} {rc:7.1f} {fi_:12.0f} {fc:7.1f} {ri/fi_:8.3f} {pc:10.3f}")
print("  rounds iops raidlab: " + " ".join(f"{x[0]:.0f}" for x in rl) + " | fio: " + " ".join(f"{x[0]:.0f}" for x in fi))
PY
done
