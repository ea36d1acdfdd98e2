#!/usr/bin/env bash
# The simulator's speed, two builds side by side: builds the bench example (`cargo build
# --release -p raidlab-sim --example bench`) at git revisions A and B, each in a temporary
# worktree with one shared target folder, then runs `bench CASE` of the two alternately,
# ROUNDS times, pinned to one CPU, and prints each build's median and fastest time and B's
# median over A's. Instruction counts (cachegrind) stopped predicting the simulator's wall
# time (BENCHMARKS.md, "The stop after (2026-11-23, night)"): judge a speed change so.
#
#   bench/sim/ab.sh A [B] [CASE]      # B: HEAD; CASE: random (default) or llnl
#   ROUNDS=20 CPU=0 bench/sim/ab.sh main~3
#
# Results are the same bit for bit only if A and B model the same; compare
# `bench golden` of the two for a change meant to be speed-only.
set -euo pipefail
A=${1:?usage: bench/sim/ab.sh A [B] [CASE]}
B=${2:-HEAD}
CASE=${3:-random}
ROUNDS=${ROUNDS:-12}
CPU=${CPU:-$(( $(nproc) - 1 ))}
case "$CASE" in random|llnl) ;; *) echo "ab.sh: CASE is random or llnl, not '$CASE'" >&2; exit 2;; esac
. "$(dirname "$0")/../two-builds.sh"
two_builds ab.sh "$A" "$B" raidlab-sim bench
# (Each run from the repository root: the bench reads systems/ there.)
cd "$ROOT"
python3 - "$WORK/bin-a" "$WORK/bin-b" "$CASE" "$ROUNDS" "$CPU" "$A" "$B" <<'PY'
import re, statistics, subprocess, sys
a, b, case, rounds, cpu, ra, rb = sys.argv[1:]
def run(binary):
    out = subprocess.run(["taskset", "-c", cpu, binary, case], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(r"(\d+) member I/Os in [0-9.]+ s = (\d+) member", out)
    return int(m.group(1)) / int(m.group(2))
times = {"a": [], "b": []}
for _ in range(int(rounds)):
    times["a"].append(run(a))
    times["b"].append(run(b))
for k, rev in (("a", ra), ("b", rb)):
    t = times[k]
    print(f"{k} {rev}: median {statistics.median(t) * 1e3:.1f} ms, fastest {min(t) * 1e3:.1f} ms ({len(t)} runs, bench {case}, CPU {cpu})")
ratio = statistics.median(times["b"]) / statistics.median(times["a"])
pairs = statistics.median(y / x for x, y in zip(times["a"], times["b"]))
print(f"b / a: {ratio:.3f} by medians, {pairs:.3f} the median of each round's ratio (below 1: b is faster)")
PY
