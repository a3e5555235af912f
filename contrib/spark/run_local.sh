#!/usr/bin/env bash
# Runs the Spark job in local mode on samples/ and the shared corpus and checks that its findings
# equal `mcpsift check` on the same inputs (as multisets of rule, severity, capture, session,
# rpc_id, tool). Installs what is missing: Java 17 (Debian openjdk-17-jre-headless) and a venv
# with PySpark 4 and pyarrow in ~/.cache/mcpsift-spark-venv. Not part of .ci/run (too heavy).
#
# usage: contrib/spark/run_local.sh [MCPSIFT_BINARY]   (default: a release build of this checkout)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
corpus="${MCPSIFT_CORPUS:-$repo/../shared/corpus}"

if ! command -v java >/dev/null; then
  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y openjdk-17-jre-headless
fi
VENV="${MCPSIFT_SPARK_VENV:-$HOME/.cache/mcpsift-spark-venv}"
if ! "$VENV/bin/python" -c 'import pyspark, pyarrow' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "pyspark>=4,<5" pyarrow
fi
bin="${1:-}"
if [ -z "$bin" ]; then
  (cd "$repo" && cargo build --release -q)
  bin="${CARGO_TARGET_DIR:-$repo/target}/release/mcpsift"
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
status=0
for root in "$repo/samples" "$(cd "$corpus" && pwd)"; do
  name="$(basename "$root")"
  parent="$(dirname "$root")"
  (cd "$parent" && PYSPARK_PYTHON="$VENV/bin/python" "$VENV/bin/spark-submit" --master 'local[2]' \
      "$here/mcpsift_spark.py" --mcpsift "$bin" --queries "${MCPSIFT_QUERIES:-$repo/queries}" --out "$out/$name" "$name" 2> "$out/$name.spark.log" | tail -1)
  (cd "$parent" && "$bin" check "$name" -q --format json > "$out/$name.check.json")
  "$VENV/bin/python" - "$out/$name" "$out/$name.check.json" <<'PY' || status=1
import collections, glob, json, sys
key = lambda f: (f["rule"], f["severity"], f["capture"], f.get("session"), f.get("rpc_id"), f.get("tool"))
spark = [json.loads(l) for p in glob.glob(sys.argv[1] + "/findings_json/*.json") for l in open(p)]
check = json.load(open(sys.argv[2]))["findings"]
a, b = collections.Counter(map(key, spark)), collections.Counter(map(key, check))
print(f"{sys.argv[1].rsplit('/', 1)[-1]}: Spark {len(spark)} finding(s), mcpsift check {len(check)}: " + ("same findings" if a == b else "DIFFERENT"))
for k, n in (a - b).items():
    print("  only Spark:", k, n)
for k, n in (b - a).items():
    print("  only check:", k, n)
sys.exit(0 if a == b else 1)
PY
done
exit $status
