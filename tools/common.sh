# Sourced by tools/*.sh: fetch and verify MNIST, then configure the build directory once.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
data/fetch.sh mnist
[ -f build/build.ninja ] || meson setup build
