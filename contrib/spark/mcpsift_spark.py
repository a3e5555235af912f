#!/usr/bin/env python3
"""mcpsift past one machine: one Spark task per capture, Parquet parts committed straight into
an mcpsift dataset, then the rule files in Spark SQL.

usage: spark-submit --files BIN mcpsift_spark.py --mcpsift BIN --out OUT [options] ROOT...

Driver
  1. Lists every ROOT (a folder or file: a local path, file://, hdfs://, s3://, gs://... anything
     pyarrow.fs opens) with sizes and mtimes, and pipes the listing to `mcpsift plan --from-list -`:
     the captures are formed by the binary's own rule (stdio tee pairs by file-name tokens).
  2. Spreads the captures over tasks, one each, largest first (sc.parallelize with one slice per
     capture): a folder of a thousand logs is a thousand tasks.
  3. Prints progress as tasks finish (captures done/total, bytes), and every failure with its
     reason; the job goes on without the failed captures.
  4. Writes OUT/manifest.json (merged like the one `mcpsift tables` writes, inputs in the binary's
     order), OUT/<table>/schema.parquet and the limits part, then removes part files no manifest
     entry names (leftovers of failed or retried attempts). `mcpsift check OUT`, DuckDB
     (`OUT/<table>/*.parquet`) and Spark (`OUT/<table>`) read the result.
  5. Runs every QUERIES/*.sql in Spark SQL over OUT (the one respelling: sql_dialect.py) and
     writes the findings to OUT/findings (Parquet) and OUT/findings_json (JSON lines).
  Exit status: 0, or 1 when any capture failed or was read only in part (all listed at the end
  and in OUT/failures.json).

Task (one capture, on an executor)
  Copies the capture's files from their URIs into local scratch through a bounded buffer
  (8 MiB; never a whole file in memory, so a 5 GB log costs the copy, not the heap), recreating
  the capture's name as a relative path, runs the shipped `mcpsift tables NAME... --out TASK_DS
  -q --jobs N` there, and commits the parts it wrote into OUT/<table>/ under names derived from
  the capture, its files' sizes and mtimes, the schema and the options (write to a temporary
  name, then rename: a retried or speculative attempt replaces the same file, never adds one).
  Returns only its manifest entry (parts, accounting) and figures (seconds, peak RSS) to the
  driver. No row ever becomes a Python object.

Capture names equal those of `mcpsift check ROOT` run in the driver's current folder when ROOT
is a relative local path (`samples`, `../shared/corpus`); for an absolute path or a URI they are
ROOT's last component plus the path below it (as `mcpsift check NAME` run from ROOT's parent).
"""
import argparse
import errno
import glob
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = ["frames", "calls", "sessions", "tools", "events", "pages"]
ALL_TABLES = TABLES + ["limits"]
COPY_BUFFER = 8 << 20


# ---------------------------------------------------------------------------------------------
# Storage: local paths with os, anything else with pyarrow.fs (importable on every executor).
# ---------------------------------------------------------------------------------------------

def is_local(uri):
    return "://" not in uri or uri.startswith("file://")


def local_path(uri):
    return uri[len("file://"):] if uri.startswith("file://") else uri


def remote_fs(uri):
    """(pyarrow filesystem, path) of a URI; s3a:// and s3n:// are S3 for pyarrow."""
    import pyarrow.fs as pafs

    for hadoop in ("s3a://", "s3n://"):
        if uri.startswith(hadoop):
            uri = "s3://" + uri[len(hadoop):]
    return pafs.FileSystem.from_uri(uri)


def join_uri(base, *parts):
    return "/".join([base.rstrip("/")] + [p.strip("/") for p in parts])


def list_root(root):
    """Every file under ROOT (or ROOT itself): [(relative path below ROOT, uri, size, mtime_ns)];
    relative path '' when ROOT is a file."""
    out = []
    if is_local(root):
        path = local_path(root)
        if os.path.isfile(path):
            st = os.stat(path)
            return [("", os.path.abspath(path), st.st_size, st.st_mtime_ns)]
        if not os.path.isdir(path):
            raise FileNotFoundError(f"{root}: no such file or folder")
        for dirpath, dirnames, filenames in os.walk(path, followlinks=True):
            dirnames.sort()
            for f in sorted(filenames):
                full = os.path.join(dirpath, f)
                try:
                    st = os.stat(full)
                except OSError:
                    st = None  # listed with size 0: the task reports why it cannot be read
                if st is not None and not stat.S_ISREG(st.st_mode):
                    continue
                out.append((os.path.relpath(full, path), os.path.abspath(full), st.st_size if st else 0, st.st_mtime_ns if st else 0))
        return out
    import pyarrow.fs as pafs

    fs, path = remote_fs(root)
    info = fs.get_file_info(path)
    if info.type == pafs.FileType.File:
        return [("", root, info.size, info.mtime_ns or 0)]
    if info.type != pafs.FileType.Directory:
        raise FileNotFoundError(f"{root}: no such file or folder")
    for i in fs.get_file_info(pafs.FileSelector(path, recursive=True)):
        if i.type == pafs.FileType.File:
            rel = i.path[len(path.rstrip("/")) + 1:]
            out.append((rel, join_uri(root, rel), i.size, i.mtime_ns or 0))
    return sorted(out)


def root_name(root):
    """The capture-name prefix of ROOT's files (see the module doc)."""
    stripped = root.rstrip("/") or root
    if is_local(root) and not root.startswith("file://") and not os.path.isabs(root):
        return os.path.normpath(stripped)
    return stripped.rsplit("/", 1)[-1]


# ---------------------------------------------------------------------------------------------
# Task side
# ---------------------------------------------------------------------------------------------

class CaptureError(Exception):
    pass


def copy_in(f, dest):
    """Copies one file from its URI to `dest` through a COPY_BUFFER buffer; checks the byte
    count against the listing (a file that grew or shrank since is an error, not a silent
    difference) and keeps the file's mtime."""
    uri, want = f["uri"], f["size"]
    try:
        if is_local(uri):
            src = open(local_path(uri), "rb")
        else:
            fs, path = remote_fs(uri)
            src = fs.open_input_stream(path, compression=None)  # never decompress: mcpsift reads .gz itself
    except FileNotFoundError:
        raise CaptureError(f"{f['name']}: missing at {uri}") from None
    except OSError as e:
        raise CaptureError(f"{f['name']}: cannot open {uri}: {e}") from None
    n = 0
    try:
        with src, open(dest, "wb") as out:
            while True:
                chunk = src.read(COPY_BUFFER)
                if not chunk:
                    break
                out.write(chunk)
                n += len(chunk)
    except OSError as e:
        raise CaptureError(f"{f['name']}: reading {uri} failed after {n} bytes: {e}") from None
    if n != want:
        raise CaptureError(f"{f['name']}: {uri} changed while read: listed {want} bytes, read {n}")
    if f.get("mtime_ns"):
        os.utime(dest, ns=(f["mtime_ns"], f["mtime_ns"]))
    return n


def put_part(src, out, rel):
    """Commits one part file: to OUT/TABLE/.NAME.tmp-UNIQUE, then renamed to OUT/rel (atomic on a
    local or HDFS store; a same-named part of another attempt is replaced). Returns its size."""
    table, name = rel.split("/", 1)
    tmp_rel = f"{table}/.{name}.tmp-{uuid.uuid4().hex[:12]}"
    if is_local(out):
        base = local_path(out)
        tmp, final = os.path.join(base, tmp_rel), os.path.join(base, rel)
        os.makedirs(os.path.dirname(final), exist_ok=True)
        try:
            os.rename(src, tmp)
        except OSError as e:
            if e.errno != errno.EXDEV:
                raise
            shutil.copyfile(src, tmp)
        os.replace(tmp, final)
        return os.path.getsize(final)
    fs, base = remote_fs(out)
    tmp, final = join_uri(base, tmp_rel), join_uri(base, rel)
    fs.create_dir(join_uri(base, table), recursive=True)
    with open(src, "rb") as s, fs.open_output_stream(tmp) as d:
        shutil.copyfileobj(s, d, COPY_BUFFER)
    try:
        fs.delete_file(final)
    except (FileNotFoundError, OSError):
        pass
    fs.move(tmp, final)
    return fs.get_file_info(final).size


def part_stem(cap, schema_version, options):
    key = "\0".join([cap["capture"], schema_version, options] + [f"{f['name']}\0{f['size']}\0{f['mtime_ns']}" for f in cap["files"]])
    return "part-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def scratch_root():
    for d in (os.environ.get("SPARK_LOCAL_DIRS", "").split(",")[0], os.environ.get("MCPSIFT_SPARK_SCRATCH"), tempfile.gettempdir()):
        if d and os.path.isdir(d):
            return d
    return None


def peak_rss_kib():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run_capture(cap, conf):
    """One capture, on an executor: copy in, `mcpsift tables`, commit the parts. Never raises:
    every failure comes back as a result with its reason."""
    t0 = time.time()
    res = {"id": cap["id"], "capture": cap["capture"], "bytes": cap["bytes"], "ok": False, "error": None, "partial": None, "entry": None, "host": os.uname().nodename}
    scratch = None
    try:
        binary = conf["binary"]
        if conf["shipped"]:
            from pyspark import SparkFiles

            binary = SparkFiles.get(conf["binary"])
        if not os.access(binary, os.X_OK):
            os.chmod(binary, os.stat(binary).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        scratch = tempfile.mkdtemp(prefix="mcpsift-task-", dir=scratch_root())
        names = [f["name"] for f in cap["files"]]
        depth = max(len([p for p in os.path.normpath(n).split(os.sep) if p == ".."]) for n in names)
        cwd = os.path.join(scratch, "in", *(["up"] * depth))
        os.makedirs(cwd)
        for f in cap["files"]:
            dest = os.path.normpath(os.path.join(cwd, f["name"]))
            if not dest.startswith(os.path.join(scratch, "in") + os.sep):
                raise CaptureError(f"{f['name']}: not a relative path")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            copy_in(f, dest)
        res["copy_s"] = round(time.time() - t0, 3)
        ds = os.path.join(scratch, "ds")
        # --allow-empty: a task of one file that is not traffic (a README) records it as skipped.
        cmd = [binary, "tables", *names, "--out", ds, "-q", "--allow-empty", "--jobs", str(conf["task_jobs"]), *conf["tables_args"]]
        err_path = os.path.join(scratch, "stderr")
        t1 = time.time()
        with open(err_path, "wb") as err:
            proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, **conf.get("env", {})})
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        res["mcpsift_s"] = round(time.time() - t1, 3)
        res["mcpsift_rss_kib"] = usage.ru_maxrss
        if proc.returncode != 0:
            with open(err_path, "rb") as e:
                e.seek(max(0, os.path.getsize(err_path) - 4000))
                tail = e.read().decode(errors="replace").strip()
            how = f"killed by signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
            raise CaptureError(f"mcpsift tables: {how}: {tail or '(no message)'}")
        with open(os.path.join(ds, "manifest.json"), encoding="utf-8") as m:
            manifest = json.load(m)
        if manifest["schema_version"] != conf["schema_version"] or manifest["options"] != conf["options"]:
            raise CaptureError(f"the executor's mcpsift wrote schema {manifest['schema_version']} with options {manifest['options']!r}; the driver's: {conf['schema_version']}, {conf['options']!r}")
        entries = [e for e in manifest["inputs"] if e["capture"] == cap["capture"]]
        if len(entries) != 1:
            raise CaptureError(f"mcpsift named the capture(s) {[e['capture'] for e in manifest['inputs']]}, not {cap['capture']!r}")
        entry = entries[0]
        for f in entry["files"]:
            listed = next((g for g in cap["files"] if g["name"] == f["path"]), None)
            if listed is None or listed["size"] != f["size"]:
                raise CaptureError(f"{f['path']}: read {f['size']} bytes, listed {listed and listed['size']}")
        problems = [d for d in entry["summary"].get("diagnostics", []) if d.get("reason") == "read_error"]
        problems += [{"file": f["path"], "detail": f["error"]} for f in entry["summary"].get("files", []) if f.get("error")]
        if problems:
            res["partial"] = "; ".join(f"{d.get('file')}: {d.get('detail')}" + (f" at byte {d['offset']}" if d.get("offset") is not None else "") for d in problems)
        stem = part_stem(cap, conf["schema_version"], conf["options"])
        for table, parts in entry["parts"].items():
            for i, p in enumerate(parts):
                rel = f"{table}/{stem}-{i:04d}.parquet"
                size = put_part(os.path.join(ds, p["file"]), conf["out"], rel)
                if size != p["bytes"]:
                    raise CaptureError(f"{rel}: committed {size} bytes, mcpsift wrote {p['bytes']}")
                p["file"] = rel
        res["entry"] = entry
        res["frames"] = sum(p["rows"] for p in entry["parts"].get("frames", []))
        res["ok"] = True
    except CaptureError as e:
        res["error"] = str(e)
    except Exception as e:  # noqa: BLE001 -- a task reports, never dies: the job goes on
        res["error"] = f"{type(e).__name__}: {e}"
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    res["seconds"] = round(time.time() - t0, 3)
    res["worker_rss_kib"] = peak_rss_kib()
    return res


# ---------------------------------------------------------------------------------------------
# Driver side
# ---------------------------------------------------------------------------------------------

def log(msg):
    print(f"mcpsift_spark: {msg}", flush=True)


def mb(n):
    return f"{n / 1e6:,.1f} MB"


def driver_dataset(binary, tables_args, tmp):
    """The schema files, the limits part, schema_version and options, from the binary run on an
    empty folder on the driver."""
    os.mkdir(os.path.join(tmp, "empty"))
    subprocess.run([binary, "tables", "empty", "--out", "ds", "-q", "--allow-empty", *tables_args], cwd=tmp, check=True, stdout=subprocess.DEVNULL)
    ds = os.path.join(tmp, "ds")
    with open(os.path.join(ds, "manifest.json"), encoding="utf-8") as m:
        return ds, json.load(m)


def plan(binary, listing, pair_args):
    """`mcpsift plan --from-list -` over NAME<TAB>BYTES lines: the captures, in the binary's order."""
    text = "".join(f"{name}\t{size}\n" for name, _uri, size, _mtime in listing)
    p = subprocess.run([binary, "plan", "--from-list", "-", *pair_args], input=text.encode(), capture_output=True)
    if p.returncode != 0:
        raise SystemExit(f"mcpsift_spark: mcpsift plan failed: {p.stderr.decode(errors='replace')}")
    return [json.loads(line) for line in p.stdout.decode().splitlines() if line.strip()]


def write_out(out, ds, manifest, entries):
    """OUT/TABLE/schema.parquet, the limits part, then OUT/manifest.json (temporary name, then
    rename), then the removal of part files no entry names."""
    named = {p["file"] for e in entries for ps in e["parts"].values() for p in ps}
    limits = manifest.get("limits")
    if limits:
        named.add(limits["file"])
    text = json.dumps({**manifest, "inputs": entries}, indent=2).encode()
    if is_local(out):
        base = local_path(out)
        for t in ALL_TABLES:
            os.makedirs(os.path.join(base, t), exist_ok=True)
            shutil.copyfile(os.path.join(ds, t, "schema.parquet"), os.path.join(base, t, ".schema.parquet.tmp"))
            os.replace(os.path.join(base, t, ".schema.parquet.tmp"), os.path.join(base, t, "schema.parquet"))
        if limits:
            shutil.copyfile(os.path.join(ds, limits["file"]), os.path.join(base, limits["file"]))
        with open(os.path.join(base, ".manifest.json.tmp"), "wb") as m:
            m.write(text)
        os.replace(os.path.join(base, ".manifest.json.tmp"), os.path.join(base, "manifest.json"))
        removed = 0
        for t in ALL_TABLES:
            for name in os.listdir(os.path.join(base, t)):
                if (name.startswith("part-") and name.endswith(".parquet") or name.startswith(".part-")) and f"{t}/{name}" not in named:
                    os.remove(os.path.join(base, t, name))
                    removed += 1
        return removed
    import pyarrow.fs as pafs

    fs, base = remote_fs(out)
    local = pafs.LocalFileSystem()
    for t in ALL_TABLES:
        fs.create_dir(join_uri(base, t), recursive=True)
        pafs.copy_files(os.path.join(ds, t, "schema.parquet"), join_uri(base, t, "schema.parquet"), source_filesystem=local, destination_filesystem=fs)
    if limits:
        pafs.copy_files(os.path.join(ds, limits["file"]), join_uri(base, limits["file"]), source_filesystem=local, destination_filesystem=fs)
    with fs.open_output_stream(join_uri(base, ".manifest.json.tmp")) as m:
        m.write(text)
    fs.move(join_uri(base, ".manifest.json.tmp"), join_uri(base, "manifest.json"))
    removed = 0
    for t in ALL_TABLES:
        for i in fs.get_file_info(pafs.FileSelector(join_uri(base, t))):
            name = i.path.rsplit("/", 1)[-1]
            if (name.startswith("part-") and name.endswith(".parquet") or name.startswith(".part-")) and f"{t}/{name}" not in named:
                fs.delete_file(i.path)
                removed += 1
    return removed


def write_text(out, name, text):
    if is_local(out):
        with open(os.path.join(local_path(out), name), "w", encoding="utf-8") as f:
            f.write(text)
        return
    fs, base = remote_fs(out)
    with fs.open_output_stream(join_uri(base, name)) as f:
        f.write(text.encode())


def read_old_manifest(out):
    try:
        if is_local(out):
            with open(os.path.join(local_path(out), "manifest.json"), encoding="utf-8") as m:
                return json.load(m)
        fs, base = remote_fs(out)
        with fs.open_input_stream(join_uri(base, "manifest.json")) as m:
            return json.loads(m.read())
    except (FileNotFoundError, OSError, ValueError):
        return None


def part_ok(out, part):
    """Present with the recorded size (what `mcpsift check` checks first)."""
    try:
        if is_local(out):
            return os.path.getsize(os.path.join(local_path(out), part["file"])) == part["bytes"]
        fs, base = remote_fs(out)
        return fs.get_file_info(join_uri(base, part["file"])).size == part["bytes"]
    except OSError:
        return False


def reusable(old_entry, cap, out):
    """The old entry of an unchanged capture (same files, sizes and mtimes; parts intact)."""
    if old_entry is None or len(old_entry["files"]) != len(cap["files"]):
        return False
    for o, f in zip(old_entry["files"], cap["files"]):
        if o["path"] != f["name"] or o["size"] != f["size"] or o["mtime_ns"] != f["mtime_ns"]:
            return False
    return all(part_ok(out, p) for ps in old_entry["parts"].values() for p in ps)


# Tables mcpsift computes at query time from the dataset's tables (not stored in it): the driver
# asks the binary for them over OUT (small: one row per change) and hands them to Spark.
COMPUTED_TABLES = ["tool_changes"]


def computed_table(spark, binary, out, name):
    """`SELECT * FROM name` by `mcpsift query OUT` on the driver, as a Spark DataFrame (columns
    from the CSV header, values from JSON lines, so numbers stay numbers)."""
    import csv
    import io

    from pyspark.sql import types as T

    def query(fmt, sql):
        p = subprocess.run([binary, "query", local_path(out), "-q", "--format", fmt, "--sql", sql], capture_output=True)
        if p.returncode != 0:
            raise RuntimeError(f"mcpsift query {name}: {p.stderr.decode(errors='replace').strip()[:300]}")
        return p.stdout.decode()

    header = next(csv.reader(io.StringIO(query("csv", f"SELECT * FROM {name} LIMIT 0"))), [])
    rows = [json.loads(line) for line in query("jsonl", f"SELECT * FROM {name}").splitlines() if line.strip()]

    def spark_type(column):
        values = [r.get(column) for r in rows if r.get(column) is not None]
        if values and all(isinstance(v, bool) for v in values):
            return T.BooleanType()
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return T.LongType()
        if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            return T.DoubleType()
        return T.StringType()

    schema = T.StructType([T.StructField(c, spark_type(c), True) for c in header])
    fix = {f.name: (float if isinstance(f.dataType, T.DoubleType) else str if isinstance(f.dataType, T.StringType) else None) for f in schema}
    data = [tuple(None if r.get(c) is None else (fix[c](r[c]) if fix[c] else r[c]) for c in header) for r in rows]
    return spark.createDataFrame(data, schema), len(rows)


def run_rules(spark, out, queries, binary):
    """Every QUERIES/*.sql in Spark SQL over OUT; findings to OUT/findings and OUT/findings_json."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    sys.path.insert(0, HERE)
    from sql_dialect import to_spark

    for t in ALL_TABLES:
        df = spark.read.parquet(join_uri(out, t))
        # UInt64 columns arrive as DECIMAL(20,0): as BIGINT, like polars and DuckDB compute.
        cols = [F.col(f.name).cast("bigint").alias(f.name) if isinstance(f.dataType, T.DecimalType) and f.dataType.scale == 0 else F.col(f.name) for f in df.schema]
        df.select(cols).createOrReplaceTempView(t)
    findings, ran, skipped = None, [], {}
    files = sorted(glob.glob(os.path.join(queries, "*.sql")))
    texts = "\n".join(open(p, encoding="utf-8").read() for p in files)
    for name in COMPUTED_TABLES:
        if name not in texts:
            continue
        if not is_local(out):
            log(f"table {name} not computed: `mcpsift query` on the driver reads a local OUT only")
            continue
        try:
            df, n = computed_table(spark, binary, out, name)
            df.createOrReplaceTempView(name)
            log(f"table {name}: {n} row(s), computed by `mcpsift query OUT` on the driver")
        except RuntimeError as e:
            log(f"table {name} not computed: {e}")
    for path in files:
        rule = os.path.basename(path)[:-len(".sql")]
        with open(path, encoding="utf-8") as q:
            sql = q.read().strip().rstrip(";")
        try:
            df = spark.sql(to_spark(sql))
        except Exception as e:  # noqa: BLE001 -- AnalysisException: a table the dataset lacks
            if "TABLE_OR_VIEW_NOT_FOUND" not in str(e):
                raise
            skipped[rule] = str(e).splitlines()[0]
            log(f"rule {rule} NOT RUN: it reads a table the dataset does not hold ({skipped[rule][:160]})")
            continue
        ran.append(rule)
        findings = df if findings is None else findings.unionByName(df, allowMissingColumns=True)
    write_text(out, "rules.json", json.dumps({"ran": ran, "not_run": skipped}, indent=2))
    if findings is None:
        log(f"no rule ran ({len(files)} file(s) in {queries})")
        return 0
    findings.write.mode("overwrite").parquet(join_uri(out, "findings"))
    written = spark.read.parquet(join_uri(out, "findings"))
    written.coalesce(1).write.mode("overwrite").json(join_uri(out, "findings_json"))
    n = written.count()
    log(f"{n} finding(s) of {len(ran)} rule(s) written to {join_uri(out, 'findings')} and {join_uri(out, 'findings_json')}")
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mcpsift", required=True, help="the mcpsift binary (run on the driver for `plan`; shipped to the executors unless --binary-on-executors)")
    ap.add_argument("--binary-on-executors", help="path of mcpsift already installed on every executor (then nothing is shipped)")
    ap.add_argument("--out", required=True, help="the dataset folder (local path or URI every executor can write)")
    ap.add_argument("--queries", default=os.path.join(HERE, "..", "..", "queries"))
    ap.add_argument("--no-rules", action="store_true", help="write the dataset only")
    ap.add_argument("--task-jobs", type=int, default=0, help="--jobs of each task's mcpsift (default: spark.task.cpus)")
    ap.add_argument("--tables-arg", action="append", default=[], help="an argument passed to every `mcpsift tables` (e.g. --tables-arg=--max-frame-bytes=1048576)")
    ap.add_argument("--pair", action="append", default=[], help="an explicit stdio pair C2S:S2C (capture-name paths), as mcpsift takes it")
    ap.add_argument("--full", action="store_true", help="read every capture again, even unchanged ones")
    ap.add_argument("roots", nargs="+")
    args = ap.parse_args()

    from pyspark.sql import SparkSession
    from pyspark.accumulators import AccumulatorParam

    binary = os.path.abspath(args.mcpsift)
    t_start = time.time()
    spark = SparkSession.builder.appName("mcpsift").config("spark.ui.showConsoleProgress", "false").getOrCreate()
    sc = spark.sparkContext
    sc.setLogLevel("ERROR")
    try:  # a rule that cannot be analysed is reported once, by this job, not as a JVM stack
        from pyspark.logger import PySparkLogger

        PySparkLogger.getLogger("SQLQueryContextLogger").disabled = True
    except ImportError:
        pass
    out = args.out if not is_local(args.out) else os.path.abspath(local_path(args.out))
    if is_local(out):
        os.makedirs(out, exist_ok=True)
    else:
        fs, base = remote_fs(out)
        fs.create_dir(base, recursive=True)
    shipped = args.binary_on_executors is None
    if shipped:
        sc.addFile(binary)

    with tempfile.TemporaryDirectory(prefix="mcpsift-driver-") as tmp:
        ds, empty = driver_dataset(binary, args.tables_arg, tmp)
        # Not the empty dataset's tool_changes: the driver's manifest has no stored table.
        manifest = {k: v for k, v in empty.items() if k not in ("inputs", "tool_changes", "tool_changes_over")}

        # 1. list, plan
        t_list = time.time()
        listing, uris = [], {}
        for root in args.roots:
            prefix = root_name(root)
            for rel, uri, size, mtime in list_root(root):
                name = os.path.join(prefix, rel) if rel else prefix
                listing.append((name, uri, size, mtime))
                uris[name] = (uri, size, mtime)
        captures = plan(binary, listing, [a for p in args.pair for a in ("--pair", p)])
        for i, c in enumerate(captures):
            c["id"] = i
            c["files"] = [{"name": n, "uri": uris[n][0], "size": uris[n][1], "mtime_ns": uris[n][2]} for n in c["files"]]
            c["bytes"] = sum(f["size"] for f in c["files"])
        total_bytes = sum(c["bytes"] for c in captures)
        log(f"{len(listing)} file(s), {len(captures)} capture(s), {mb(total_bytes)} under {', '.join(args.roots)} (listed and planned in {time.time() - t_list:.1f} s)")

        # 2. unchanged captures keep their parts (as `mcpsift tables` does)
        old = None if args.full else read_old_manifest(out)
        kept = {}
        if old and old.get("schema_version") == manifest["schema_version"] and old.get("options") == manifest["options"]:
            by_name = {e["capture"]: e for e in old.get("inputs", [])}
            for c in captures:
                if reusable(by_name.get(c["capture"]), c, out):
                    kept[c["id"]] = by_name[c["capture"]]
        todo = sorted((c for c in captures if c["id"] not in kept), key=lambda c: (-c["bytes"], c["id"]))
        if kept:
            log(f"{len(kept)} capture(s) unchanged since the last run: their parts are kept")

        # 3. one task per capture, largest first
        task_jobs = args.task_jobs or int(sc.getConf().get("spark.task.cpus", "1"))
        conf = {
            "binary": os.path.basename(binary) if shipped else args.binary_on_executors,
            "shipped": shipped,
            "out": out,
            "task_jobs": task_jobs,
            "tables_args": args.tables_arg,
            "schema_version": manifest["schema_version"],
            "options": manifest["options"],
        }

        class ListParam(AccumulatorParam):
            def zero(self, value):
                return []

            def addInPlace(self, a, b):
                a.extend(b)
                return a

        done_acc = sc.accumulator([], ListParam())
        results, failure = [], []

        def task(c, conf=conf, acc=done_acc):
            r = run_capture(c, conf)
            acc.add([{k: r.get(k) for k in ("capture", "bytes", "ok", "error", "partial", "seconds", "frames", "host")}])
            return r

        def job():
            try:
                results.extend(sc.parallelize(todo, numSlices=len(todo)).map(task).collect())
            except BaseException as e:  # noqa: BLE001
                failure.append(e)

        t_job = time.time()
        if todo:
            log(f"{len(todo)} task(s), one per capture, largest first ({mb(todo[0]['bytes'])} .. {mb(todo[-1]['bytes'])})")
            th = threading.Thread(target=job, daemon=True)
            th.start()
            shown, done_bytes = 0, 0
            while True:
                finished = not th.is_alive()
                seen = list(done_acc.value)
                for r in seen[shown:]:
                    shown += 1
                    done_bytes += r["bytes"]
                    head = f"[{shown}/{len(todo)} captures, {mb(done_bytes)} of {mb(sum(c['bytes'] for c in todo))}]"
                    if not r["ok"]:
                        log(f"{head} FAILED {r['capture']}: {r['error']}")
                    else:
                        extra = f"; read in part: {r['partial']}" if r["partial"] else ""
                        log(f"{head} {r['capture']}: {r['frames']:,} frames in {r['seconds']:.1f} s on {r['host']}{extra}")
                if finished:
                    break
                time.sleep(0.5)
            th.join()
            if failure:
                raise failure[0]
        job_s = time.time() - t_job

        # 4. the manifest: inputs in the binary's order
        by_id = {r["id"]: r for r in results}
        entries, failed = [], []
        for c in captures:
            if c["id"] in kept:
                entries.append(kept[c["id"]])
                continue
            r = by_id.get(c["id"])
            if r is None:
                failed.append({"capture": c["capture"], "reason": "no result came back from its task"})
            elif not r["ok"]:
                failed.append({"capture": c["capture"], "reason": r["error"]})
            else:
                entries.append(r["entry"])
                if r["partial"]:
                    failed.append({"capture": c["capture"], "reason": f"read in part (its rows up to the error are kept, as `mcpsift check` keeps them): {r['partial']}"})
        removed = write_out(out, ds, manifest, entries)
        rows = {t: sum(p["rows"] for e in entries for p in e["parts"].get(t, [])) for t in TABLES}
        log(f"dataset {out}: {len(entries)} capture(s), " + ", ".join(f"{t} {n:,}" for t, n in rows.items()) + (f"; {removed} stale part file(s) removed" if removed else ""))
        if results:
            worker = max(r.get("worker_rss_kib") or 0 for r in results)
            child = max(r.get("mcpsift_rss_kib") or 0 for r in results)
            busy = sum(r["seconds"] for r in results)
            log(f"tasks: {len(results)} in {job_s:.1f} s ({mb(sum(r['bytes'] for r in results) / job_s)}/s, {busy:.1f} task-seconds); peak RSS: python worker {worker / 1024:.0f} MiB, mcpsift {child / 1024:.0f} MiB")

    # 5. the rules
    if not args.no_rules:
        run_rules(spark, out, os.path.abspath(args.queries), binary)
    write_text(out, "failures.json", json.dumps({"failed": failed}, indent=2))
    log(f"done in {time.time() - t_start:.1f} s")
    spark.stop()
    if failed:
        log(f"{len(failed)} capture(s) failed:")
        for f in failed:
            log(f"  {f['capture']}: {f['reason']}")
        sys.exit(1)


if __name__ == "__main__":
    main()
