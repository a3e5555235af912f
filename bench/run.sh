#!/usr/bin/env bash
# mcpsift benchmark: generated MCP traffic, mcpsift vs jq / DuckDB / tshark.
# See bench/README.md. Usage: bench/run.sh [--small] [--repeat N] [--tools LIST] [--no-build]
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: bench/run.sh [--small] [--repeat N] [--tools LIST] [--no-build]

  --small        ~20 MB inputs (smoke run) instead of ~350/400/520 MB
  --repeat N     measure each command N times; report best wall time, highest peak RSS
                 and lowest CPU time (user+sys)
  --tools LIST   comma-separated subset of mcpsift,jq,duckdb,tshark (default: all; duckdb
                 runs the three DuckDB peers: method count, aggregate, facts to Parquet)
  --no-build     do not run cargo build; use the binary already in $CARGO_TARGET_DIR (if any)

Environment: CARGO_TARGET_DIR (default ~/.cache/mcpsift-target), BENCH_DIR (default
~/.cache/mcpsift-bench), BENCH_TIMEOUT (seconds per measured command, default 3600),
BENCH_SEED (default 1), MCPSIFT_BIN (use this binary instead of building).
EOF
}

SMALL=0
REPEAT=1
TOOLS="mcpsift,jq,duckdb,tshark"
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --small) SMALL=1 ;;
        --repeat) REPEAT="${2:?--repeat needs a number}"; shift ;;
        --repeat=*) REPEAT="${1#*=}" ;;
        --tools) TOOLS="${2:?--tools needs a list}"; shift ;;
        --tools=*) TOOLS="${1#*=}" ;;
        --no-build) BUILD=0 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "run.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --repeat needs a positive integer" >&2; exit 2; }

BENCH_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$BENCH_SRC/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpsift-target}"
BENCH_DIR="${BENCH_DIR:-$HOME/.cache/mcpsift-bench}"
VENV="$HOME/.cache/mcpsift-bench-venv"
TIMEOUT="${BENCH_TIMEOUT:-3600}"
SEED="${BENCH_SEED:-1}"
if [[ $SMALL == 1 ]]; then
    DATA="$BENCH_DIR/smoke"
    SIZE_SMALL=20000000; SIZE_LARGE=20000000; SIZE_PCAP=20000000
else
    DATA="$BENCH_DIR"
    SIZE_SMALL=350000000; SIZE_LARGE=400000000; SIZE_PCAP=520000000
fi
mkdir -p "$DATA"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/mcpsift-bench.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
LOGS="$BENCH_DIR/logs"
mkdir -p "$LOGS"

log() { printf '[bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
want() { [[ ",$TOOLS," == *",$1,"* ]]; }

# ---------------------------------------------------------------------------------------------
# 1. Peers
# ---------------------------------------------------------------------------------------------
APT_UPDATED=0
apt_install() {
    if ! command -v apt-get >/dev/null; then
        log "apt-get not available; install $* by hand"; return 1
    fi
    local sudo=()
    [[ $(id -u) == 0 ]] || sudo=(sudo)
    if [[ $APT_UPDATED == 0 ]]; then
        "${sudo[@]}" apt-get update -qq >/dev/null
        APT_UPDATED=1
    fi
    log "apt-get install $*"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

[[ -x /usr/bin/time ]] || apt_install time
if want jq && ! command -v jq >/dev/null; then apt_install jq; fi
if want tshark && ! command -v tshark >/dev/null; then
    # wireshark-common asks whether non-root users may capture; preseed "no".
    echo "wireshark-common wireshark-common/install-setuid boolean false" | \
        { [[ $(id -u) == 0 ]] && debconf-set-selections || sudo debconf-set-selections; } 2>/dev/null || true
    apt_install tshark
fi
if want duckdb && ! "$VENV/bin/python" -c 'import duckdb' 2>/dev/null; then
    log "creating $VENV with duckdb"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check duckdb
fi
PY="$VENV/bin/python"
[[ -x $PY ]] || PY="$(command -v python3)"

# ---------------------------------------------------------------------------------------------
# 2. mcpsift
# ---------------------------------------------------------------------------------------------
MCPSIFT="${MCPSIFT_BIN:-$CARGO_TARGET_DIR/release/mcpsift}"
if want mcpsift && [[ -z ${MCPSIFT_BIN:-} && $BUILD == 1 ]]; then
    log "cargo build --release (CARGO_TARGET_DIR=$CARGO_TARGET_DIR; log: $LOGS/cargo-build.log)"
    if (cd "$REPO" && cargo build --release) >"$LOGS/cargo-build.log" 2>&1; then
        log "build ok"
    else
        log "cargo build failed (see $LOGS/cargo-build.log); mcpsift will show as failed"
        tail -n 5 "$LOGS/cargo-build.log" >&2 || true
        MCPSIFT=""
    fi
fi

# ---------------------------------------------------------------------------------------------
# 3. Inputs (reused when generated with the same size, seed and generator source)
# ---------------------------------------------------------------------------------------------
GEN_HASH="$(cat "$BENCH_SRC/gen_stdio.py" "$BENCH_SRC/gen_pcap.py" "$BENCH_SRC/textpool.py" | sha256sum | cut -c1-16)"

generate() { # FILE SIZE CMD...
    local file="$1" size="$2"; shift 2
    local params="size=$size seed=$SEED gen=$GEN_HASH"
    if [[ -f $file && -f $file.meta.json && -f $file.params && "$(cat "$file.params")" == "$params" ]]; then
        log "reusing $file ($(stat -c %s "$file") bytes)"
        return
    fi
    rm -f "$file" "$file.params" "$file.meta.json"
    log "generating $file (target $size bytes)"
    local t0=$SECONDS
    "$PY" "$@" --size "$size" --seed "$SEED" >/dev/null
    echo "$params" >"$file.params"
    log "  $(stat -c %s "$file") bytes in $((SECONDS - t0)) s"
}
generate "$DATA/small.log" "$SIZE_SMALL" "$BENCH_SRC/gen_stdio.py" small "$DATA/small.log"
generate "$DATA/large.log" "$SIZE_LARGE" "$BENCH_SRC/gen_stdio.py" large "$DATA/large.log"
generate "$DATA/big.pcap" "$SIZE_PCAP" "$BENCH_SRC/gen_pcap.py" "$DATA/big.pcap"

meta_field() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1.meta.json" "$2"; }
largest_frame() { meta_field "$1" largest_frame; }

# ---------------------------------------------------------------------------------------------
# 4. Measurements
# ---------------------------------------------------------------------------------------------
RESULTS="$WORK/results.tsv"
: >"$RESULTS"

# measure TOOL FILE CMD... : runs CMD (stdout to /dev/null) REPEAT times under GNU time.
# Records the best wall time, the highest peak RSS and the lowest CPU time (user+sys, children
# included) of the repeats, and the file's message count (from the generator's meta.json).
# A command that exits non-zero or times out is recorded as failed.
measure() {
    local tool="$1" file="$2"; shift 2
    local name size lf msgs best="" rss="" cpu="" status=ok i secs kib usr sys cs rc t0 t1 frames=-
    name="$(basename "$file")"
    size="$(stat -c %s "$file")"
    lf="$(largest_frame "$file")"
    msgs="$(meta_field "$file" messages)"
    for ((i = 1; i <= REPEAT; i++)); do
        log "$tool $name (run $i/$REPEAT)"
        rm -rf "$WORK/out"; mkdir -p "$WORK/out"
        rc=0
        t0=$EPOCHREALTIME
        timeout "$TIMEOUT" /usr/bin/time -f '%e %M %U %S' -o "$WORK/time" "$@" \
            >"$WORK/stdout" 2>"$LOGS/$tool-$name.stderr" || rc=$?
        t1=$EPOCHREALTIME
        if [[ $rc != 0 ]]; then
            status="failed"
            [[ $rc == 124 ]] && status="timeout"
            log "  $tool exited $rc; stderr: $LOGS/$tool-$name.stderr"
            tail -n 3 "$LOGS/$tool-$name.stderr" >&2 || true
            break
        fi
        if [[ $tool == mcpsift && -z "$(ls -A "$WORK/out")" ]]; then
            status="failed"
            log "  mcpsift exited 0 but wrote nothing to --out"
            break
        fi
        if [[ $tool == mcpsift && $i == 1 ]]; then
            frames="$(count_frames "$WORK/out")/$msgs"
            log "  frames table rows / messages generated: $frames"
        fi
        # Wall time from bash's microsecond clock (GNU time's %e has 10 ms steps); RSS from %M;
        # CPU time is user (%U) + system (%S), 10 ms steps.
        read -r _ kib usr sys < <(tail -n 1 "$WORK/time")
        secs="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')"
        cs="$(awk -v u="$usr" -v s="$sys" 'BEGIN{printf "%.2f", u + s}')"
        log "  ${secs} s, ${cs} s CPU, peak RSS $((kib / 1024)) MiB"
        if [[ -z $best ]] || awk -v a="$secs" -v b="$best" 'BEGIN{exit !(a < b)}'; then best="$secs"; fi
        if [[ -z $rss || $kib -gt $rss ]]; then rss="$kib"; fi
        if [[ -z $cpu ]] || awk -v a="$cs" -v b="$cpu" 'BEGIN{exit !(a < b)}'; then cpu="$cs"; fi
    done
    if [[ $status != ok ]]; then best=""; rss=""; cpu=""; fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$name" "$size" "$best" "$rss" "$status" "$lf" "$frames" \
        "$cpu" "$msgs" >>"$RESULTS"
}

# Rows of mcpsift's frames table (one row per JSON-RPC message), read with DuckDB; "?" if unknown.
count_frames() {
    local t="$1/frames/*.parquet"
    [[ -d $1/frames ]] || { echo "?"; return; }
    "$PY" -c 'import sys, duckdb; print(duckdb.connect().execute("SELECT count(*) FROM read_parquet(?)", [sys.argv[1]]).fetchone()[0])' \
        "$t" 2>/dev/null || echo "?"
}

mcpsift_failed() { # FILE REASON
    printf '%s\t%s\t%s\t\t\t%s\t%s\t-\t\t%s\n' mcpsift "$(basename "$1")" "$(stat -c %s "$1")" "$2" "$(largest_frame "$1")" \
        "$(meta_field "$1" messages)" >>"$RESULTS"
}

run_mcpsift() { # FILE
    if [[ -z $MCPSIFT || ! -x $MCPSIFT ]]; then
        log "mcpsift binary not available (${MCPSIFT:-build failed})"
        mcpsift_failed "$1" failed
        return
    fi
    measure mcpsift "$1" "$MCPSIFT" tables "$1" --out "$WORK/out" --format parquet
}

for f in "$DATA/small.log" "$DATA/large.log"; do
    if want mcpsift; then run_mcpsift "$f"; fi
    if want jq; then measure jq "$f" jq -c '{id,method}' "$f"; fi
    if want duckdb; then
        measure duckdb "$f" "$PY" "$BENCH_SRC/duckdb_methods.py" "$f"
        measure duckdb-aggregate "$f" "$PY" "$BENCH_SRC/duckdb_aggregate.py" "$f"
        measure duckdb-facts "$f" "$PY" "$BENCH_SRC/duckdb_facts.py" "$f" "$WORK/out"
    fi
done
f="$DATA/big.pcap"
if want mcpsift; then run_mcpsift "$f"; fi
if want tshark; then
    measure tshark "$f" tshark -r "$f" -o tcp.desegment_tcp_streams:TRUE -o http.desegment_body:TRUE \
        -o http.dechunk_body:TRUE -Y http -T fields -e http.file_data
fi

# ---------------------------------------------------------------------------------------------
# 5. Report
# ---------------------------------------------------------------------------------------------
{
    echo "date:     $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "inputs:   $DATA ($([[ $SMALL == 1 ]] && echo 'smoke, --small' || echo full)); seed $SEED; repeat $REPEAT"
    echo "machine:  $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "mcpsift:  $( { [[ -n $MCPSIFT && -x $MCPSIFT ]] && "$MCPSIFT" --version 2>/dev/null; } || echo 'not built') ($(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo 'no commit'))"
    echo "jq:       $(jq --version 2>/dev/null || echo -)"
    echo "duckdb:   $("$PY" -c 'import duckdb; print(duckdb.__version__)' 2>/dev/null || echo -)"
    echo "tshark:   $(tshark --version 2>/dev/null | sed -n 1p || echo -)"
    for f in small.log large.log big.pcap; do
        echo "$f: $(cat "$DATA/$f.meta.json")"
    done
} >"$WORK/env.txt"
cat "$WORK/env.txt"
cp "$RESULTS" "$LOGS/results-latest.tsv"
"$PY" "$BENCH_SRC/report.py" "$RESULTS" "$WORK/env.txt" "$BENCH_SRC/results-latest.md"
log "wrote $BENCH_SRC/results-latest.md"
