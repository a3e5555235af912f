#!/usr/bin/env python3
"""Tests sql_dialect.py: the rename itself, then the table of spellings against the engines.

usage: python test_sql_dialect.py [--mcpsift BIN] [--no-spark] [--no-duckdb]

1. to_spark renames QUANTILE_CONT calls in code, never in strings, quoted names or comments.
2. Each spelling of the table in sql_dialect.py is tried on every engine reachable (polars SQL
   through `mcpsift query`, DuckDB, Spark SQL local[1]): accepted or refused as the table says,
   and every accepted exact-quantile spelling gives the same number (frames.wire_bytes of
   samples/stdio_ts at q = 0.3, 0.5, 0.95) as QUANTILE_CONT does in polars.
3. Every rule file, after to_spark, is analysed and run by Spark SQL over an empty dataset
   (so no rule uses another engine-only spelling); a rule reading a table the dataset does not
   hold (one mcpsift computes at query time) is reported as skipped, as the job reports it.
Exits non-zero on any mismatch; prints one line per check.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from sql_dialect import to_spark  # noqa: E402

# spelling template -> accepted by (polars, duckdb, spark); None: not an exact-quantile spelling
TABLE = [
    ("QUANTILE_CONT({x}, {q})", (True, True, False), True),
    ("PERCENTILE_CONT({q}) WITHIN GROUP (ORDER BY {x})", (False, True, True), True),
    ("percentile({x}, {q})", (False, False, True), True),
    ("PERCENTILE_CONT({x}, {q})", (False, False, False), True),
    ("QUANTILE({x}, {q})", (False, True, False), False),
    ("MEDIAN({x})", (True, True, True), None),
]
QS = [0.3, 0.5, 0.95]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def unit():
    cases = [
        ("SELECT QUANTILE_CONT(x, 0.95) FROM t", "SELECT percentile(x, 0.95) FROM t"),
        ("select quantile_cont (x,0.5) from t", "select percentile (x,0.5) from t"),
        ("SELECT 'QUANTILE_CONT(x, 1)' AS s", "SELECT 'QUANTILE_CONT(x, 1)' AS s"),
        ("SELECT 'it''s QUANTILE_CONT(' AS s, QUANTILE_CONT(y, 0.1)", "SELECT 'it''s QUANTILE_CONT(' AS s, percentile(y, 0.1)"),
        ("-- QUANTILE_CONT(x, q) in polars\nSELECT QUANTILE_CONT(a, 0.5)", "-- QUANTILE_CONT(x, q) in polars\nSELECT percentile(a, 0.5)"),
        ("/* QUANTILE_CONT( */ SELECT 1", "/* QUANTILE_CONT( */ SELECT 1"),
        ('SELECT "QUANTILE_CONT" (x) FROM t', 'SELECT "QUANTILE_CONT" (x) FROM t'),
        ("SELECT my_quantile_cont(x) , quantile_cont_x FROM t", "SELECT my_quantile_cont(x) , quantile_cont_x FROM t"),
    ]
    for sql, want in cases:
        got = to_spark(sql)
        check(got == want, f"to_spark {sql!r} -> {got!r}")


def sample_dataset(binary, tmp):
    out = os.path.join(tmp, "ds")
    subprocess.run([binary, "tables", "samples/stdio_ts", "--out", out, "-q"], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    return out


def polars(binary, ds, expr):
    p = subprocess.run([binary, "query", ds, "-q", "--format", "csv", "--sql", f"SELECT {expr} AS v FROM frames"], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    return float(p.stdout.strip().splitlines()[-1])


def duck(ds, expr):
    import duckdb

    con = duckdb.connect()
    con.execute(f"CREATE VIEW frames AS SELECT * FROM read_parquet('{ds}/frames/*.parquet')")
    try:
        return float(con.execute(f"SELECT {expr} AS v FROM frames").fetchall()[0][0])
    except duckdb.Error:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcpsift", help="an mcpsift binary (polars SQL); without it, polars cells are skipped")
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--no-duckdb", action="store_true")
    args = ap.parse_args()
    unit()
    if not args.mcpsift:
        print("skip engines: no --mcpsift (the sample dataset is written by it)")
        return finish()
    binary = os.path.abspath(args.mcpsift)
    with tempfile.TemporaryDirectory() as tmp:
        ds = sample_dataset(binary, tmp)
        engines = [("polars", lambda e: polars(binary, ds, e))]
        if not args.no_duckdb:
            engines.append(("duckdb", lambda e: duck(ds, e)))
        spark = None
        if not args.no_spark:
            from pyspark.sql import SparkSession

            spark = SparkSession.builder.master("local[1]").appName("sql_dialect test").config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate()
            spark.sparkContext.setLogLevel("OFF")
            from pyspark.logger import PySparkLogger

            PySparkLogger.getLogger("SQLQueryContextLogger").disabled = True  # refusals are expected here
            spark.read.parquet(f"{ds}/frames").createOrReplaceTempView("frames")

            def spark_eval(e):
                try:
                    return float(spark.sql(f"SELECT {e} AS v FROM frames").collect()[0][0])
                except Exception:
                    return None

            engines.append(("spark", spark_eval))
        reference = {q: polars(binary, ds, f"QUANTILE_CONT(wire_bytes, {q})") for q in QS}
        check(all(v is not None for v in reference.values()), f"polars QUANTILE_CONT reference {reference}")
        for template, accepted, exact in TABLE:
            for i, (engine, run) in enumerate(engines):
                want = accepted[["polars", "duckdb", "spark"].index(engine)]
                qs = [0.5] if exact is None else QS
                values = [run(template.format(x="wire_bytes", q=q)) for q in qs]
                got = all(v is not None for v in values)
                check(got == want, f"{engine:6} {template.format(x='x', q='q'):48} accepted={got} (table: {want})")
                if got and exact is not False:
                    same = all(abs(v - reference[q]) <= 1e-9 * max(1.0, abs(reference[q])) for v, q in zip(values, qs))
                    check(same, f"{engine:6} {template.format(x='x', q='q'):48} = polars QUANTILE_CONT {values}")
        if spark is not None:
            rules_in_spark(spark, binary, tmp)
            spark.stop()
    return finish()


def rules_in_spark(spark, binary, tmp):
    os.mkdir(os.path.join(tmp, "empty"))
    subprocess.run([binary, "tables", "empty", "--out", "eds", "-q", "--allow-empty"], cwd=tmp, check=True, stdout=subprocess.DEVNULL)
    for table in ["frames", "calls", "sessions", "tools", "events", "pages", "limits"]:
        spark.read.parquet(os.path.join(tmp, "eds", table)).createOrReplaceTempView(table)
    for path in sorted(glob.glob(os.path.join(REPO, "queries", "*.sql"))):
        sql = open(path, encoding="utf-8").read().strip().rstrip(";")
        try:
            spark.sql(to_spark(sql)).collect()
            check(True, f"spark runs {os.path.basename(path)} after to_spark")
        except Exception as e:  # noqa: BLE001
            if "TABLE_OR_VIEW_NOT_FOUND" in str(e):
                # Not a spelling: the rule reads a table mcpsift computes at query time and the
                # dataset does not hold; the job reports such a rule as not run.
                print(f"skip spark runs {os.path.basename(path)}: reads a table the dataset does not hold: {str(e).splitlines()[0][:120]}")
                continue
            check(False, f"spark runs {os.path.basename(path)} after to_spark: {str(e).splitlines()[0][:200]}")


def finish():
    print(f"{len(failures)} failure(s)" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
