# Sourced by the side-by-side benchmarks (bench/sim/ab.sh, bench/parity/grid.sh): builds one
# example of one package at two git revisions, each in a temporary worktree with one shared
# target folder (target/ab), and copies the two binaries to $WORK/bin-a and $WORK/bin-b.
# The worktrees and $WORK go when the script exits.
#
#   . "$(dirname "$0")/../two-builds.sh"
#   two_builds NAME A B PACKAGE EXAMPLE      # NAME prefixes error messages
two_builds() {
  local name=$1 a=$2 b=$3 package=$4 example=$5 r rev
  ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  WORK=$(mktemp -d)
  trap 'for r in a b; do git -C "$ROOT" worktree remove --force "$WORK/$r" 2>/dev/null || true; done; rm -rf "$WORK"' EXIT
  for r in a b; do
    rev=$a; [ "$r" = b ] && rev=$b
    git -C "$ROOT" rev-parse --verify -q "$rev^{commit}" >/dev/null \
      || { echo "$name: '$rev' is not a revision of $ROOT" >&2; exit 2; }
    git -C "$ROOT" worktree add -q --detach "$WORK/$r" "$rev"
    (cd "$WORK/$r" && CARGO_TARGET_DIR="$ROOT/target/ab" \
      cargo build --release -q -p "$package" --example "$example")
    cp "$ROOT/target/ab/release/examples/$example" "$WORK/bin-$r"
  done
}
