#!/usr/bin/env bash
# bench/parse/run.sh FILE [LINES] [ROUNDS]: builds and runs the parse timer (bench/README.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cargo run --quiet --release --manifest-path "$here/Cargo.toml" -- "$@"
