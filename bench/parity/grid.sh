#!/usr/bin/env bash
# raidlab's parity kernels against ISA-L over a grid of stripe shapes (data blocks × chunk),
# two builds side by side: builds the vs_isal example at git revisions A and B, each in a
# temporary worktree with one shared target folder, runs them alternately ROUNDS times per
# shape, pinned to one CPU, and prints per shape each build's median raidlab GB/s (decimal, of
# data) and its median best-round ratio to ISA-L, for XOR (P) and P+Q. Needs libisal-dev.
#
#   bench/parity/grid.sh A [B] [--kernel NAME] [--isal SET]   # B: HEAD; --isal needs both builds to have it
#   ROUNDS=5 SECONDS_PER=1 CPU=0 bench/parity/grid.sh main~1
set -euo pipefail
A=${1:?usage: bench/parity/grid.sh A [B] [--kernel NAME]}
shift
B=HEAD
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then B=$1; shift; fi
ROUNDS=${ROUNDS:-3}
SECONDS_PER=${SECONDS_PER:-1}
CPU=${CPU:-$(( $(nproc) - 1 ))}
if ! [ -e /usr/include/isa-l/raid.h ] && ! ldconfig -p 2>/dev/null | grep -q libisal; then
  echo "grid.sh: ISA-L not found (install the Debian package libisal-dev)" >&2
  exit 2
fi
. "$(dirname "$0")/../two-builds.sh"
two_builds grid.sh "$A" "$B" raidlab-parity vs_isal
python3 - "$WORK/bin-a" "$WORK/bin-b" "$A" "$B" "$ROUNDS" "$SECONDS_PER" "$CPU" "$@" <<'PY'
import re, statistics, subprocess, sys
a, b, ra, rb, rounds, secs, cpu, *extra = sys.argv[1:]
shapes = [(2, 64), (4, 64), (8, 64), (12, 64), (16, 64), (20, 64), (8, 4), (8, 256), (8, 1024), (16, 1024)]
got = {}
for _ in range(int(rounds)):
    for n, kib in shapes:
        for k, binary in (("a", a), ("b", b)):
            out = subprocess.run(["taskset", "-c", cpu, binary, "--seconds", secs,
                                  "--data-disks", str(n), "--chunk", str(kib * 1024), *extra],
                                 capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                m = re.match(r"(xor|pq) \(.*?\)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", line)
                if m:
                    got.setdefault((n, kib, k, m.group(1)), []).append(
                        (float(m.group(2)), float(m.group(4))))
print(f"a = {ra}, b = {rb}: raidlab GB/s of data (decimal) and best-round ratio to ISA-L, "
      f"medians of {rounds} alternating runs of {secs} s, CPU {cpu}")
for n, kib in shapes:
    cells = []
    for op in ("xor", "pq"):
        for k in ("a", "b"):
            v = got[(n, kib, k, op)]
            cells.append(f"{op} {k} {statistics.median(x[0] for x in v):6.1f} "
                         f"{statistics.median(x[1] for x in v):.2f}x")
    print(f"{n:>2} x {kib:>4} KiB | " + " | ".join(cells))
PY
