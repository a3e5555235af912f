#!/usr/bin/env bash
# The Spark job against one machine, same machine, same run: `mcpsift tables -j2` and the job in
# local mode with 2 cores (local[2], --no-rules: both write the dataset) on the same folder of
# logs, then the same pair on one large capture. Prints wall times, tasks, peak RSS (mcpsift's
# from /usr/bin/time; the job's per process, sampled from /proc by rss_sampler.py: the driver
# JVM, which is the executor in local mode, the PySpark workers and the mcpsift children), the
# rows of both datasets (they must be equal) and seconds per GB.
#
# usage: contrib/spark/bench_local.sh MCPSIFT_BINARY FLEET_DIR [BIG_DIR]
#   FLEET_DIR  e.g. ten 300 MB logs of bench/gen_stdio.py small (see contrib/spark/README.md);
#              `-` skips it
#   BIG_DIR    a folder holding e.g. one 3 GB log of the same generator (over the JVM's 2 GB
#              array limit)
# env: MCPSIFT_SPARK_VENV (default ~/.cache/mcpsift-spark-venv), SPARK_BENCH_RULES=1 also times
#      the job with the rules against `mcpsift check DS`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
fleet="$2"
big="${3:-}"
VENV="${MCPSIFT_SPARK_VENV:-$HOME/.cache/mcpsift-spark-venv}"
export PYSPARK_PYTHON="$VENV/bin/python" PYSPARK_DRIVER_PYTHON="$VENV/bin/python"
[[ -x /usr/bin/time ]] || { echo "bench_local.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/mcpsift-spark-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT

rows() { "$VENV/bin/python" -c '
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
t = {}
for e in m["inputs"]:
    for k, ps in e["parts"].items():
        t[k] = t.get(k, 0) + sum(p["rows"] for p in ps)
print(len(m["inputs"]), "captures,", ", ".join(f"{k} {t.get(k, 0):,}" for k in ["frames", "calls", "sessions", "tools", "events", "pages"]))' "$1"; }

pair() { # LABEL INPUT
  local label=$1 input=$2 bytes
  bytes=$(stat -c %s "$input"/* | paste -sd+ | bc)
  cat "$input"/* >/dev/null # warm the page cache for both runs alike
  /usr/bin/time -f '%e %M' -o "$work/$label.mt" "$bin" tables "$input" --out "$work/$label.mds" -q -j2 >/dev/null
  read -r m_s m_kib <"$work/$label.mt"
  local t0 t1
  t0=$(date +%s.%N)
  "$VENV/bin/python" "$here/rss_sampler.py" --label "$label spark" -- "$VENV/bin/spark-submit" --master 'local[2]' \
    --conf spark.ui.enabled=false "$here/mcpsift_spark.py" --mcpsift "$bin" --no-rules --out "$work/$label.sds" "$input" \
    >"$work/$label.out" 2>"$work/$label.err"
  t1=$(date +%s.%N)
  local s_s
  s_s=$(echo "$t1 - $t0" | bc)
  echo "== $label: $(printf "%'d" "$bytes") bytes"
  echo "  mcpsift tables -j2:        $m_s s, peak RSS $((m_kib / 1024)) MiB; $(rows "$work/$label.mds")"
  printf "  spark local[2] --no-rules: %.1f s (%.2fx); %s\n" "$s_s" "$(echo "$s_s / $m_s" | bc -l)" "$(rows "$work/$label.sds")"
  grep -h "^mcpsift_spark: tasks:\|capture(s), [0-9.,]* MB under" "$work/$label.out" | sed 's/^/  /'
  grep -h "peak RSS per process" "$work/$label.err" | sed 's/^/  /'
  printf "  per GB: mcpsift %.1f s (%.1f core-s), spark %.1f s (%.1f core-s)\n" \
    "$(echo "$m_s * 1000000000 / $bytes" | bc -l)" "$(echo "2 * $m_s * 1000000000 / $bytes" | bc -l)" \
    "$(echo "$s_s * 1000000000 / $bytes" | bc -l)" "$(echo "2 * $s_s * 1000000000 / $bytes" | bc -l)"
  if [ "${SPARK_BENCH_RULES:-0}" = 1 ]; then
    /usr/bin/time -f '%e %M' -o "$work/$label.ct" "$bin" check "$work/$label.mds" -q >/dev/null || true
    read -r c_s c_kib <"$work/$label.ct"
    t0=$(date +%s.%N)
    "$VENV/bin/spark-submit" --master 'local[2]' --conf spark.ui.enabled=false "$here/mcpsift_spark.py" --mcpsift "$bin" \
      --out "$work/$label.sds" "$input" >"$work/$label.rules.out" 2>&1 || true
    t1=$(date +%s.%N)
    printf "  rules: mcpsift check DS %.1f s (%d MiB); spark job with rules (dataset unchanged, kept) %.1f s\n" "$c_s" $((c_kib / 1024)) "$(echo "$t1 - $t0" | bc)"
    grep -h "finding(s) of" "$work/$label.rules.out" | sed 's/^/  /'
  fi
  rm -rf "$work/$label.mds" "$work/$label.sds"
}

if [ "$fleet" != - ]; then
  pair fleet "$(cd "$fleet" && pwd)"
fi
if [ -n "$big" ]; then
  pair big "$(cd "$big" && pwd)"
fi
