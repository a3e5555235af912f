#!/usr/bin/env bash
# Proves the Spark job on a real standalone cluster, not local mode: starts a Spark master and
# two workers (1 core, 2 GiB each) on 127.0.0.1 from the PySpark pip install (its spark-class and
# jars), submits mcpsift_spark.py with the binary shipped to the executors (--files), then
# compares the findings with `mcpsift check --format json` on the same inputs (samples/ plus the
# shared corpus, both named as `mcpsift check samples ../shared/corpus` run in the repository
# names them) as multisets of (rule, severity, capture, session, rpc_id, tool), checks that
# `mcpsift check OUT` reads the dataset the executors wrote, and stops every process it started,
# by PID, on exit. Prints the comparison; exit status 0 only when the findings are the same.
#
# usage: contrib/spark/run_cluster.sh [MCPSIFT_BINARY]    (default: a release build of this checkout)
# env:   MCPSIFT_CORPUS (default ../shared/corpus), MCPSIFT_SPARK_VENV (default ~/.cache/mcpsift-spark-venv)
# Installs what is missing: Java 17 (Debian openjdk-17-jre-headless) and a venv with PySpark 4
# and pyarrow. Not part of .ci/run (about 2 minutes here).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=setup.sh
source "$here/setup.sh" "${1:-}"
export SPARK_HOME="$("$VENV/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
export PYSPARK_PYTHON="$VENV/bin/python" PYSPARK_DRIVER_PYTHON="$VENV/bin/python" SPARK_LOCAL_IP=127.0.0.1

work="$(mktemp -d "${TMPDIR:-/tmp}/mcpsift-cluster.XXXXXX")"
pids=()
stop() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.2
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  [ "${#pids[@]}" -gt 0 ] && echo "cluster: stopped master and workers (pids ${pids[*]})"
  rm -rf "$work"
}
trap stop EXIT
trap 'exit 130' INT TERM

port="$("$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
master="spark://127.0.0.1:$port"
"$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master --host 127.0.0.1 --port "$port" --webui-port 0 >"$work/master.log" 2>&1 &
pids+=($!)
echo "$!" >"$work/pids"
for _ in $(seq 1 150); do grep -q "I have been elected leader" "$work/master.log" && break; sleep 0.2; done
grep -q "I have been elected leader" "$work/master.log" || { echo "cluster: the master did not start:"; tail -20 "$work/master.log"; exit 1; }
for w in 1 2; do
  mkdir -p "$work/worker$w/local"
  SPARK_LOCAL_DIRS="$work/worker$w/local" "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker \
    --host 127.0.0.1 --cores 1 --memory 2g --work-dir "$work/worker$w" --webui-port 0 "$master" >"$work/worker$w.log" 2>&1 &
  pids+=($!)
  echo "$!" >>"$work/pids"
done
for _ in $(seq 1 150); do [ "$(grep -c "Registering worker" "$work/master.log")" -ge 2 ] && break; sleep 0.2; done
[ "$(grep -c "Registering worker" "$work/master.log")" -ge 2 ] || { echo "cluster: the workers did not register:"; tail -5 "$work"/worker*.log; exit 1; }
echo "cluster: master $master (pid ${pids[0]}), workers pids ${pids[1]} ${pids[2]} (1 core, 2 GiB each)"

corpus_rel="$(realpath --relative-to="$repo" "$corpus")"
status=0
cd "$repo"
"$VENV/bin/python" "$here/rss_sampler.py" --label cluster --pids-from "$work/pids" -- \
  "$SPARK_HOME/bin/spark-submit" --master "$master" --deploy-mode client --files "$bin" \
    --conf spark.executor.cores=1 --conf spark.executor.memory=512m --conf spark.cores.max=2 \
    --conf spark.ui.enabled=false --py-files "$here/sql_dialect.py" \
    "$here/mcpsift_spark.py" --mcpsift "$bin" --out "$work/out" samples "$corpus_rel" \
    >"$work/spark.out" 2>"$work/spark.err" || status=$?
grep -v '^mcpsift_spark: \[' "$work/spark.out" || true
grep -c '^mcpsift_spark: \[' "$work/spark.out" | sed 's/^/cluster: progress lines: /'
grep -h 'peak RSS per process' "$work/spark.err" || true
if [ "$status" != 0 ]; then echo "cluster: the job exited $status:"; grep -v '^\s*at ' "$work/spark.err" | tail -20; fi
executors="$(ls -d "$work"/worker*/app-*/* 2>/dev/null | wc -l)"
echo "cluster: $executors executor(s) ran on the workers: $(grep -l 'Running task\|Finished task' "$work"/worker*/app-*/*/stderr 2>/dev/null | wc -l) of them ran tasks"
"$bin" check samples "$corpus_rel" -q --format json --queries "$repo/queries" >"$work/check.json" || true
"$VENV/bin/python" "$here/compare_findings.py" "samples + $corpus_rel" "$work/out" "$work/check.json" || status=1
if "$bin" check "$work/out" -q --format json --queries "$repo/queries" >"$work/check_out.json"; then
  "$VENV/bin/python" - "$work/check.json" "$work/check_out.json" <<'PY' || status=1
import json, sys
a, b = (json.load(open(p))["findings"] for p in sys.argv[1:3])
print("mcpsift check OUT (the dataset the executors wrote): " + ("the same findings as on the raw inputs" if a == b else "DIFFERENT findings"))
sys.exit(0 if a == b else 1)
PY
else
  echo "mcpsift check OUT failed"; status=1
fi
exit $status
