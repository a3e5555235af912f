#!/usr/bin/env python3
"""Runs mcpsift's rule files unchanged in DuckDB over a table folder written by `mcpsift tables`.

usage: run_rules.py TABLES_DIR QUERIES_DIR > findings.jsonl

Each table is read from the parts TABLES_DIR/manifest.json names (the dataset `mcpsift tables`
writes), else from TABLES_DIR/NAME.parquet or every TABLES_DIR/NAME/*.parquet. Every QUERIES_DIR/*.sql is one rule; its rows are printed as JSON lines
with the rule file's name added as `rule_file`. Exit 1 naming the rule when one fails.
"""
import glob
import json
import os
import sys

import duckdb

TABLES = ["frames", "calls", "sessions", "tools", "events", "pages", "limits", "tool_changes"]


def main() -> int:
    tables_dir, queries_dir = sys.argv[1], sys.argv[2]
    con = duckdb.connect()
    manifest_path = os.path.join(tables_dir, "manifest.json")
    manifest = json.load(open(manifest_path, encoding="utf-8")) if os.path.isfile(manifest_path) else None
    for name in TABLES:
        if manifest is not None:
            # The parts the manifest names (never leftovers of an interrupted run), plus the
            # zero-row schema file so an empty table still has its columns.
            named = [p["file"] for e in manifest["inputs"] for p in e["parts"].get(name, [])]
            if name in ("limits", "tool_changes") and manifest.get(name):
                # Tables of the whole dataset, not of one capture.
                named = [manifest[name]["file"]]
            schema = os.path.join(tables_dir, name, "schema.parquet")
            files = [os.path.join(tables_dir, f) for f in named] + ([schema] if os.path.isfile(schema) else [])
        else:
            single = os.path.join(tables_dir, f"{name}.parquet")
            files = [single] if os.path.isfile(single) else sorted(glob.glob(os.path.join(tables_dir, name, "*.parquet")))
        if not files:
            print(f"run_rules.py: no parquet for table {name} in {tables_dir}", file=sys.stderr)
            return 2
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet({files!r})")
    for path in sorted(glob.glob(os.path.join(queries_dir, "*.sql"))):
        rule = os.path.splitext(os.path.basename(path))[0]
        sql = open(path, encoding="utf-8").read()
        try:
            cur = con.execute(sql)
        except duckdb.Error as e:
            print(f"run_rules.py: rule {rule}: {e}", file=sys.stderr)
            return 1
        cols = [d[0] for d in cur.description]
        for row in cur.fetchall():
            obj = dict(zip(cols, row))
            obj["rule_file"] = rule
            print(json.dumps(obj, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
