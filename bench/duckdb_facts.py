#!/usr/bin/env python3
"""DuckDB peer doing mcpsift's job on a stdio log: the same per-message facts, to Parquet.

  duckdb_facts.py FILE OUTDIR     (run with the bench venv's python; default threads)

For every JSON-RPC message (one line of FILE): its line number, id, method, the tool (a
tools/call's params.name, and for a response the tool of the request it answers, joined on
id), result.isError, error.code, bytes on the wire (the line without its newline), number of
result.content blocks, whether result.structuredContent is present, and the client version
(clientInfo.version of the file's initialize request). Written to OUTDIR/frames.parquet, as
`mcpsift tables FILE --out OUTDIR` writes its frames table: a peer that extracts the same facts,
beside duckdb_methods.py that only counts methods. Prints the row count.
"""

import os
import sys

import duckdb

from duckdb_common import message_facts

path, outdir = sys.argv[1], sys.argv[2]
os.makedirs(outdir, exist_ok=True)
con = duckdb.connect()  # in-memory, default threads (all cores)
con.execute(message_facts(True), [path])
con.execute(
    f"""
    COPY (
      WITH req AS (SELECT CAST(id AS VARCHAR) AS id, any_value(req_tool) AS tool
                   FROM m WHERE method = 'tools/call' GROUP BY 1),
           cv AS (SELECT any_value(client_version) AS v FROM m WHERE method = 'initialize')
      SELECT m.seq, CAST(m.id AS VARCHAR) AS id, m.method,
             CASE WHEN m.is_response THEN req.tool ELSE m.req_tool END AS tool,
             m.is_error, m.error_code, m.bytes, m.content_blocks, m.has_structured,
             cv.v AS client_version
      FROM m CROSS JOIN cv
      LEFT JOIN req ON m.is_response AND CAST(m.id AS VARCHAR) = req.id
      ORDER BY m.seq
    ) TO '{os.path.join(outdir, "frames.parquet")}' (FORMAT parquet)
    """
)
print(con.execute("SELECT count(*) FROM m").fetchone()[0])
