#!/usr/bin/env python3
"""mcpsift past one machine: build the tables on Spark executors, run the rule files in Spark SQL.

usage: spark-submit mcpsift_spark.py --mcpsift BIN --out OUT [--queries DIR] ROOT...

Each ROOT is a folder or file URI Spark can read (a local path, hdfs://..., s3a://...). Its files
are read with `binaryFiles` (recursively), grouped by folder (stdio tee pairs live in one folder),
and every group is written to a scratch folder on an executor, where the shipped `mcpsift`
binary runs `mcpsift tables` on it. The rows come back to Spark, which writes the dataset
OUT/<table>/ (Parquet), then runs every QUERIES/*.sql unchanged through Spark SQL over it and
writes the findings to OUT/findings (Parquet) and OUT/findings_json (JSON lines).

Capture names are the paths below each ROOT prefixed with the ROOT's last path component, so a
job over `samples` names captures as `mcpsift check samples` does (run check from the ROOT's
parent folder to compare).
"""
import argparse
import glob
import re
import os
import shutil
import stat
import subprocess
import tempfile

from pyspark import SparkFiles
from pyspark.sql import SparkSession
from pyspark.sql import types as T

TABLES = ["frames", "calls", "sessions", "tools", "events", "pages", "limits"]


def spark_type(arrow_type):
    """Arrow type of a column mcpsift writes -> Spark type (unsigned ints fit in a long)."""
    import pyarrow as pa

    if pa.types.is_boolean(arrow_type):
        return T.BooleanType()
    if pa.types.is_integer(arrow_type):
        return T.LongType()
    if pa.types.is_floating(arrow_type):
        return T.DoubleType()
    return T.StringType()


def schemas(binary):
    """Each table's schema, read from the empty tables of an empty input."""
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "empty"))
        subprocess.run([binary, "tables", "empty", "--out", "t", "-q"], cwd=tmp, check=True, capture_output=True)
        out = {}
        for name in TABLES:
            schema = pq.read_schema(os.path.join(tmp, "t", name, "schema.parquet"))
            out[name] = T.StructType([T.StructField(f.name, spark_type(f.type), True) for f in schema])
        return out


def tables_of_group(group, binary_name="mcpsift"):
    """Executor side: one folder's files -> (table, row) pairs, by the shipped binary (shipped
    under its own file name, `binary_name`)."""
    import pyarrow.parquet as pq

    folder, files = group
    binary = SparkFiles.get(binary_name)
    os.chmod(binary, os.stat(binary).st_mode | stat.S_IXUSR)
    tmp = tempfile.mkdtemp(prefix="mcpsift-spark-")
    try:
        for rel, data in files:
            path = os.path.join(tmp, "in", rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        proc = subprocess.run([binary, "tables", folder, "--out", os.path.join(tmp, "t"), "-q"], cwd=os.path.join(tmp, "in"), capture_output=True)
        if proc.returncode != 0:
            raise RuntimeError(f"mcpsift tables {folder}: {proc.stderr.decode(errors='replace')}")
        for name in TABLES:
            if name == "limits":
                continue  # the same for every capture: written once by the driver
            for row in pq.read_table(os.path.join(tmp, "t", name)).to_pylist():
                yield name, row
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcpsift", required=True, help="the mcpsift binary to ship to the executors")
    ap.add_argument("--out", required=True, help="dataset and findings folder (any Spark URI)")
    ap.add_argument("--queries", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "queries"))
    ap.add_argument("roots", nargs="+")
    args = ap.parse_args()

    spark = SparkSession.builder.appName("mcpsift").config("spark.hadoop.mapreduce.input.fileinputformat.input.dir.recursive", "true").getOrCreate()
    sc = spark.sparkContext
    sc.addFile(os.path.abspath(args.mcpsift))
    schema = schemas(os.path.abspath(args.mcpsift))

    groups = None
    for root in args.roots:
        base = root.rstrip("/").rsplit("/", 1)[-1]
        files = sc.binaryFiles(root)
        # file:/abs/samples/stdio_ts/c2s.log -> samples/stdio_ts/c2s.log (relative to ROOT's parent)

        def rel(item, base=base):
            uri, data = item
            i = uri.rfind("/" + base + "/")
            name = uri[i + 1:] if i >= 0 else base + "/" + uri.rsplit("/", 1)[-1]
            return os.path.dirname(name), (name, data)

        g = files.map(rel).groupByKey().mapValues(list)
        groups = g if groups is None else groups.union(g)

    shipped = os.path.basename(args.mcpsift)
    rows = groups.flatMap(lambda group: tables_of_group(group, shipped)).cache()
    for name in TABLES:
        if name == "limits":
            with tempfile.TemporaryDirectory() as tmp:
                import pyarrow.parquet as pq

                os.mkdir(os.path.join(tmp, "empty"))
                subprocess.run([os.path.abspath(args.mcpsift), "tables", "empty", "--out", "t", "-q"], cwd=tmp, check=True, capture_output=True)
                data = pq.read_table(os.path.join(tmp, "t", "limits")).to_pylist()
            df = spark.createDataFrame(data, schema[name])
        else:
            df = spark.createDataFrame(rows.filter(lambda r, n=name: r[0] == n).map(lambda r: r[1]), schema[name])
        df.write.mode("overwrite").parquet(f"{args.out}/{name}")

    for name in TABLES:
        spark.read.parquet(f"{args.out}/{name}").createOrReplaceTempView(name)
    findings = None
    for path in sorted(glob.glob(os.path.join(args.queries, "*.sql"))):
        sql = open(path, encoding="utf-8").read().strip().rstrip(";")
        # The one spelling that differs: polars and DuckDB say QUANTILE_CONT(x, q), Spark SQL
        # percentile(x, q); both are the exact linear-interpolated quantile.
        sql = re.sub(r"\bQUANTILE_CONT\(", "percentile(", sql, flags=re.IGNORECASE)
        df = spark.sql(sql)
        findings = df if findings is None else findings.unionByName(df, allowMissingColumns=True)
    findings.write.mode("overwrite").parquet(f"{args.out}/findings")
    findings.coalesce(1).write.mode("overwrite").json(f"{args.out}/findings_json")
    print(f"mcpsift_spark: {findings.count()} finding(s) written to {args.out}/findings and {args.out}/findings_json")
    spark.stop()


if __name__ == "__main__":
    main()
