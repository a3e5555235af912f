#!/usr/bin/env bash
# mcpsift rules over a dataset against DuckDB running the same rule files over the same parts:
# `mcpsift check DS --format json` and `contrib/duckdb/run_rules.py DS queries`, in turns, N
# times each; prints each run, the medians, the ratio (DuckDB's median / mcpsift's: above 1,
# mcpsift is faster), both sides' median CPU (user+sys) and mcpsift's peak RSS against the 1 GB
# bound. See bench/README.md.
#
# Usage: bench/rules.sh DATASET [--repeat N]
#   DATASET      a folder `mcpsift tables ... --out DATASET` wrote (e.g. of the fleet logs:
#                `mcpsift tables ~/.cache/mcpsift-spark-bench/fleet10 --out /tmp/fleetds`)
#   --repeat N   runs of each (default 3)
# Environment: MCPSIFT_BIN (default $CARGO_TARGET_DIR/release/mcpsift), BENCH_VENV (a venv with
# duckdb; default ~/.cache/mcpsift-bench-venv, made by bench/run.sh).
set -euo pipefail

DS="${1:?usage: bench/rules.sh DATASET [--repeat N]}"
shift
REPEAT=3
while [[ $# -gt 0 ]]; do
    case "$1" in
        --repeat) REPEAT="${2:?}"; shift ;;
        -h|--help) sed -n 2,13p "$0"; exit 0 ;;
        *) echo "rules.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MCPSIFT="${MCPSIFT_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/mcpsift-target}/release/mcpsift}"
PY="${BENCH_VENV:-$HOME/.cache/mcpsift-bench-venv}/bin/python"
[[ -x /usr/bin/time ]] || { echo "rules.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
[[ -x $MCPSIFT ]] || { echo "rules.sh: no binary at $MCPSIFT (cargo build --release, or set MCPSIFT_BIN)" >&2; exit 2; }
"$PY" -c "import duckdb" 2>/dev/null || { echo "rules.sh: $PY has no duckdb (run bench/run.sh once, or set BENCH_VENV)" >&2; exit 2; }
WORK="$(mktemp -d "${TMPDIR:-/tmp}/mcpsift-rules.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

for ((i = 1; i <= REPEAT; i++)); do
    /usr/bin/time -f "mcpsift %e %M %U %S" -a -o "$WORK/times" "$MCPSIFT" check "$DS" --format json > "$WORK/check.json" 2> "$WORK/check.err" \
        || { [[ $? == 1 ]] || { cat "$WORK/check.err" >&2; exit 2; }; }
    /usr/bin/time -f "duckdb %e %M %U %S" -a -o "$WORK/times" "$PY" "$REPO/contrib/duckdb/run_rules.py" "$DS" "$REPO/queries" > "$WORK/duckdb.jsonl" 2> "$WORK/duckdb.err" \
        || { cat "$WORK/duckdb.err" >&2; exit 2; }
done
python3 - "$WORK/times" "$WORK/check.json" "$WORK/duckdb.jsonl" <<'PY'
import json, statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and l.split()[0] in ("mcpsift", "duckdb")]
for who in ("mcpsift", "duckdb"):
    runs = [(float(r[1]), int(r[2]) // 1024) for r in rows if r[0] == who]
    print(f"{who:8} " + "  ".join(f"{s:.2f} s {m} MB" for s, m in runs))
med = {who: statistics.median(float(r[1]) for r in rows if r[0] == who) for who in ("mcpsift", "duckdb")}
peak = max(int(r[2]) // 1024 for r in rows if r[0] == "mcpsift")
findings = len(json.load(open(sys.argv[2]))["findings"])
duck = sum(1 for l in open(sys.argv[3]) if l.strip())
print(f"median   mcpsift {med['mcpsift']:.2f} s, DuckDB {med['duckdb']:.2f} s: mcpsift {med['duckdb'] / med['mcpsift']:.2f}x DuckDB (target 1x)")
cpu = {who: statistics.median(float(r[3]) + float(r[4]) for r in rows if r[0] == who) for who in ("mcpsift", "duckdb")}
print(f"cpu      median user+sys mcpsift {cpu['mcpsift']:.2f} s, DuckDB {cpu['duckdb']:.2f} s: mcpsift {cpu['duckdb'] / cpu['mcpsift']:.2f}x DuckDB's CPU (info)")
print(f"memory   mcpsift peak {peak} MB (bound 1024 MB): {'pass' if peak < 1024 else 'FAIL'}")
print(f"findings mcpsift {findings}, DuckDB {duck}")
PY
