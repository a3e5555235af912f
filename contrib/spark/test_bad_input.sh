#!/usr/bin/env bash
# Bad input for the Spark job (local mode): a folder with a good stdio pair, a truncated gzip, a
# file missing at its URI (a dangling link), a capture on which the binary crashes (SIGSEGV, from
# a wrapper), and a file that is not a capture. Checks that the job exits 1, lists each failure
# with its reason, keeps going (the good captures are in the dataset), leaves no part file the
# manifest does not name, and that `mcpsift check OUT` reads what it wrote.
#
# usage: contrib/spark/test_bad_input.sh MCPSIFT_BINARY
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
VENV="${MCPSIFT_SPARK_VENV:-$HOME/.cache/mcpsift-spark-venv}"
export PYSPARK_PYTHON="$VENV/bin/python" PYSPARK_DRIVER_PYTHON="$VENV/bin/python"
work="$(mktemp -d "${TMPDIR:-/tmp}/mcpsift-badinput.XXXXXX")"
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/bad/good" "$work/bad/trunc" "$work/bad/crash"
cp "$repo/samples/stdio_ts/c2s.log" "$repo/samples/stdio_ts/s2c.log.gz" "$work/bad/good/"
cp "$repo/samples/stdio_ts/c2s.log" "$work/bad/trunc/"
head -c 20000 "$repo/samples/stdio_ts/s2c.log.gz" >"$work/bad/trunc/s2c.log.gz"
cp "$repo/samples/hostlog/mcp.log" "$work/bad/crash/mcp.log"
ln -s "$work/nowhere.log" "$work/bad/gone.log"
echo "not a capture" >"$work/bad/notes.txt"
# The binary, except that it dies of SIGSEGV on any capture under crash/.
cat >"$work/mcpsift-wrapper" <<EOF
#!/usr/bin/env bash
for a in "\$@"; do case "\$a" in *crash/*) echo "wrapper: crashing on \$a" >&2; kill -SEGV \$\$;; esac; done
exec "$bin" "\$@"
EOF
chmod +x "$work/mcpsift-wrapper"

cd "$work"
status=0
"$VENV/bin/spark-submit" --master 'local[2]' --conf spark.ui.enabled=false "$here/mcpsift_spark.py" \
  --mcpsift "$work/mcpsift-wrapper" --out "$work/out" bad >"$work/job.out" 2>"$work/job.err" || status=$?
cat "$work/job.out"
fail=0
expect() { if grep -q -- "$1" "$work/job.out"; then echo "ok   $2"; else echo "FAIL $2 (no line matching: $1)"; fail=1; fi; }
[ "$status" = 1 ] && echo "ok   the job exits 1" || { echo "FAIL the job exits $status, not 1"; fail=1; }
expect 'FAILED bad/gone.log: bad/gone.log: missing at' "a file missing at its URI is a listed failure"
expect 'FAILED bad/crash/mcp.log: mcpsift tables: killed by signal 11' "a binary that crashes is a listed failure with its stderr"
expect 'bad/trunc/c2s.log+s2c.log.gz: read in part (its rows up to the error are kept.*incomplete deflate stream' "a truncated gzip is listed, with the reason"
expect '\] bad/good/c2s.log+s2c.log.gz: 27 frames' "the good capture is read"
expect 'finding(s) of' "the rules ran over the rest"
"$VENV/bin/python" - "$work/out" <<'PY' || fail=1
import json, os, sys
out = sys.argv[1]
m = json.load(open(os.path.join(out, "manifest.json")))
caps = sorted(e["capture"] for e in m["inputs"])
named = {p["file"] for e in m["inputs"] for ps in e["parts"].values() for p in ps} | {m["limits"]["file"]}
on_disk = {f"{t}/{n}" for t in os.listdir(out) if os.path.isdir(os.path.join(out, t)) and t not in ("findings", "findings_json") for n in os.listdir(os.path.join(out, t)) if n != "schema.parquet"}
ok = caps == ["bad/good/c2s.log+s2c.log.gz", "bad/notes.txt", "bad/trunc/c2s.log+s2c.log.gz"]
print(("ok   " if ok else "FAIL ") + f"manifest inputs {caps}")
print(("ok   " if on_disk == named else "FAIL ") + f"no part file outside the manifest ({len(named)} named, {len(on_disk)} on disk; extra {sorted(on_disk - named)}, missing {sorted(named - on_disk)})")
sys.exit(0 if ok and on_disk == named else 1)
PY
if "$bin" check "$work/out" -q >/dev/null; then echo "ok   mcpsift check OUT reads the dataset"; else echo "FAIL mcpsift check OUT"; fail=1; fi
[ "$fail" = 0 ] && echo "bad input: all checks passed" || echo "bad input: FAILED"
exit $fail
