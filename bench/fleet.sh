#!/usr/bin/env bash
# mcpsift fleet benchmark: a folder of generated small-message logs (an audit's day), measured
# for memory (peak RSS of `tables` and `check`), cores (`--jobs 1` against `--jobs 2`) and
# incremental runs (unchanged input, one added file). Figures are printed as ratios measured in
# the same run. See bench/README.md.
#
# Usage: bench/fleet.sh [--files N] [--size BYTES] [--no-build]
#   --files N      generated logs (default 20)
#   --size BYTES   bytes per log (default 500000000: 20 files = 10 GB)
# Environment: CARGO_TARGET_DIR (default ~/.cache/mcpsift-target), BENCH_DIR (default
# ~/.cache/mcpsift-bench), MCPSIFT_BIN (use this binary instead of building).
set -euo pipefail

FILES=20
SIZE=500000000
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --files) FILES="${2:?}"; shift ;;
        --size) SIZE="${2:?}"; shift ;;
        --no-build) BUILD=0 ;;
        -h|--help) sed -n 2,12p "$0"; exit 0 ;;
        *) echo "fleet.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

BENCH_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$BENCH_SRC/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpsift-target}"
BENCH_DIR="${BENCH_DIR:-$HOME/.cache/mcpsift-bench}"
FLEET="$BENCH_DIR/fleet-$FILES-$SIZE"
EXTRA="$BENCH_DIR/fleet-extra-$SIZE"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/mcpsift-fleet.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
log() { printf '[fleet %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

[[ -x /usr/bin/time ]] || { echo "fleet.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
MCPSIFT="${MCPSIFT_BIN:-$CARGO_TARGET_DIR/release/mcpsift}"
if [[ -z ${MCPSIFT_BIN:-} && $BUILD == 1 ]]; then
    log "cargo build --release"
    (cd "$REPO" && cargo build --release -q)
fi

# Inputs: one generated log per seed (reused when present with the same size).
mkdir -p "$FLEET" "$EXTRA"
gen() { # OUT SEED
    [[ -f $1 ]] && return
    log "generating $1"
    python3 "$BENCH_SRC/gen_stdio.py" small "$1.part" --size "$SIZE" --seed "$2" >/dev/null
    rm -f "$1.part.meta.json"
    mv "$1.part" "$1"
}
for i in $(seq 1 "$FILES"); do gen "$FLEET/day-$i.log" "$i"; done
gen "$EXTRA/day-extra.log" 1000
TOTAL=$(du -cb "$FLEET"/*.log | tail -1 | cut -f1)
log "input: $FILES files, $TOTAL bytes"
cat "$FLEET"/*.log > /dev/null  # warm the page cache once, for every run alike

# measure NAME CMD...: wall seconds and peak RSS (KiB) into $WORK/NAME.
measure() {
    local name=$1; shift
    /usr/bin/time -f '%e %M' -o "$WORK/$name.time" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || { log "$name failed: $(tail -3 "$WORK/$name.err")"; echo "- -" >"$WORK/$name.time"; }
    read -r secs kib <"$WORK/$name.time"
    log "$name: ${secs} s, $((kib / 1024)) MiB peak RSS"
    echo "$name $secs $kib" >>"$WORK/results"
}

measure tables_j1 "$MCPSIFT" tables "$FLEET" --out "$WORK/ds1" -q --jobs 1
rm -rf "$WORK/ds1"
measure tables_j2 "$MCPSIFT" tables "$FLEET" --out "$WORK/ds2" -q --jobs 2
measure tables_unchanged "$MCPSIFT" tables "$FLEET" --out "$WORK/ds2" -q
cp "$EXTRA/day-extra.log" "$FLEET/day-extra.log"
measure tables_one_added "$MCPSIFT" tables "$FLEET" --out "$WORK/ds2"
grep -h "input(s) read" "$WORK/tables_one_added.err" >&2 || true
rm -f "$FLEET/day-extra.log"
measure check_dataset "$MCPSIFT" check "$WORK/ds2" -q
measure check_raw "$MCPSIFT" check "$FLEET" -q --jobs 2

python3 - "$WORK/results" "$TOTAL" "$FILES" <<'EOF'
import sys
rows = {n: (float(s), int(k)) for n, s, k in (l.split() for l in open(sys.argv[1]) if "-" not in l.split()[1:])}
total, files = int(sys.argv[2]), int(sys.argv[3])
mib = lambda k: k / 1024
print(f"fleet: {files} files, {total / 1e9:.2f} GB")
for n, (s, k) in rows.items():
    print(f"  {n:18} {s:8.1f} s  {mib(k):8.0f} MiB peak RSS  {total / 1e6 / s if s else 0:8.1f} MB/s")
if "tables_j1" in rows and "tables_j2" in rows:
    print(f"  cores: --jobs 2 is {rows['tables_j1'][0] / rows['tables_j2'][0]:.2f}x --jobs 1 (target >= 1.7x)")
if "tables_unchanged" in rows and "tables_j2" in rows:
    print(f"  incremental: unchanged re-run takes {100 * rows['tables_unchanged'][0] / rows['tables_j2'][0]:.2f}% of the first run (target <= 5%)")
if "tables_one_added" in rows and "tables_j2" in rows:
    print(f"  incremental: one added file takes {100 * rows['tables_one_added'][0] / rows['tables_j2'][0]:.1f}% of the first run ({100 / (files + 1):.1f}% of the input)")
for n in ("tables_j2", "check_raw", "check_dataset"):
    if n in rows:
        print(f"  memory: {n} peaks at {mib(rows[n][1]):.0f} MiB (target <= 1024 MiB); input/RSS {total / (rows[n][1] * 1024):.1f}x")
EOF
