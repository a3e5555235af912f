#!/usr/bin/env python3
"""DuckDB peer: count messages by JSON-RPC method in a newline-delimited JSON file.

  duckdb_methods.py FILE     (run with the bench venv's python; default threads)
"""

import sys

import duckdb

path = sys.argv[1]
con = duckdb.connect()  # in-memory, default threads (all cores)
rows = con.execute(
    "SELECT json_extract_string(j, '$.method') m, count(*) "
    "FROM read_json_objects(?, format='newline_delimited', maximum_object_size=67108864) t(j) "
    "GROUP BY m ORDER BY 2 DESC",
    [path],
).fetchall()
for m, n in rows:
    print(f"{m}\t{n}")
