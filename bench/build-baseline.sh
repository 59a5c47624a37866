#!/bin/sh
# Builds commit $1 (default: main) of this repository into a temporary directory, for CHRYSALIS_BASELINE (bench/baseline.ts).
set -e
commit="${1:-main}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(mktemp -d)/chrysalis-baseline"
mkdir -p "$dir"
git -C "$repo" archive "$commit" | tar -x -C "$dir"
ln -s "$repo/node_modules" "$dir/node_modules"
(cd "$dir" && npm run build >/dev/null)
echo "CHRYSALIS_BASELINE=$dir/dist"
