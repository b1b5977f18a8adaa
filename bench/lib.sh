# The opening every bench script shares: run from the repository's top,
# tardy in $TARDY (a release build, unless $TARDY already names a binary,
# as CI does with the test build), and a scratch directory $WORK that is
# removed on exit. Source it: `. "$(dirname "$0")/lib.sh"`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ -z "${TARDY:-}" ]; then
  cargo build --release --quiet
  TARDY=$(realpath "${CARGO_TARGET_DIR:-target}")/release/tardy
fi
TARDY=$(realpath "$TARDY")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
