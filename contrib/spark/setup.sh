# Shared by run_local.sh and run_cluster.sh (sourced, with the binary as $1): the repository and
# corpus paths, Java 17 and a venv with PySpark 4 and pyarrow when missing, and the mcpsift binary
# (a release build of this checkout when none is given). Sets here, repo, corpus, VENV and bin.
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
corpus="$(cd "${MCPSIFT_CORPUS:-$repo/../shared/corpus}" && pwd)"

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
