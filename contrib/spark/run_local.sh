#!/usr/bin/env bash
# Runs the Spark job in local mode (local[2]) on samples/ and the shared corpus, in one job run
# from the repository (captures named as `mcpsift check samples ../shared/corpus` names them),
# and checks that its findings equal `mcpsift check` on the same inputs (as multisets of rule,
# severity, capture, session, rpc_id, tool) and that `mcpsift check OUT` reads the dataset the
# job wrote. Installs what is missing: Java 17 (Debian openjdk-17-jre-headless) and a venv with
# PySpark 4 and pyarrow in ~/.cache/mcpsift-spark-venv. Not part of .ci/run (too heavy).
# run_cluster.sh does the same on a standalone cluster.
#
# usage: contrib/spark/run_local.sh [MCPSIFT_BINARY]   (default: a release build of this checkout)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=setup.sh
source "$here/setup.sh" "${1:-}"
export PYSPARK_PYTHON="$VENV/bin/python" PYSPARK_DRIVER_PYTHON="$VENV/bin/python"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
corpus_rel="$(realpath --relative-to="$repo" "$corpus")"
cd "$repo"
status=0
"$VENV/bin/spark-submit" --master 'local[2]' --conf spark.ui.enabled=false "$here/mcpsift_spark.py" \
  --mcpsift "$bin" --queries "${MCPSIFT_QUERIES:-$repo/queries}" --out "$out/ds" samples "$corpus_rel" \
  >"$out/spark.out" 2>"$out/spark.err" || status=$?
grep -v '^mcpsift_spark: \[' "$out/spark.out" || true
if [ "$status" != 0 ]; then echo "the job exited $status:"; grep -v '^\s*at ' "$out/spark.err" | tail -20; fi
"$bin" check samples "$corpus_rel" -q --format json --queries "${MCPSIFT_QUERIES:-$repo/queries}" >"$out/check.json" || true
"$VENV/bin/python" "$here/compare_findings.py" "samples + $corpus_rel" "$out/ds" "$out/check.json" || status=1
"$bin" check "$out/ds" -q --format json --queries "${MCPSIFT_QUERIES:-$repo/queries}" >"$out/check_ds.json" || status=1
"$VENV/bin/python" -c '
import json, sys
a, b = (json.load(open(p))["findings"] for p in sys.argv[1:3])
print("mcpsift check OUT (the dataset the job wrote): " + ("the same findings as on the raw inputs" if a == b else "DIFFERENT findings"))
sys.exit(0 if a == b else 1)' "$out/check.json" "$out/check_ds.json" || status=1
exit $status
