#!/usr/bin/env python3
"""DuckDB peer: mcpsift's per-message facts on a stdio log, aggregated, with no row output.

  duckdb_aggregate.py FILE     (run with the bench venv's python; default threads)

Extracts the same nine facts per message (one line of FILE) as duckdb_facts.py: id, method,
tool (a tools/call's params.name, and for a response the tool of the request it answers,
joined on id), result.isError, error.code, bytes on the wire (the line without its newline),
number of result.content blocks, whether result.structuredContent is present, and the client
version (clientInfo.version of the file's initialize request). Then, instead of writing every
row to Parquet, it aggregates them GROUP BY method, tool (responses have no method: their
group is the tool they answer) and prints that small result: messages, responses, bytes
(sum and max), isError results, JSON-RPC errors, content blocks, structuredContent results,
the client version. A peer between duckdb_methods.py (counts methods only) and
duckdb_facts.py (the same facts, every row written out).
"""

import sys

import duckdb

from duckdb_common import message_facts

path = sys.argv[1]
con = duckdb.connect()  # in-memory, default threads (all cores)
con.execute(message_facts(False), [path])
rows = con.execute(
    """
    WITH req AS (SELECT CAST(id AS VARCHAR) AS id, any_value(req_tool) AS tool
                 FROM m WHERE method = 'tools/call' GROUP BY 1),
         cv AS (SELECT any_value(client_version) AS v FROM m WHERE method = 'initialize'),
         f AS (
           SELECT m.method,
                  CASE WHEN m.is_response THEN req.tool ELSE m.req_tool END AS tool,
                  m.is_response, m.is_error, m.error_code, m.bytes, m.content_blocks,
                  m.has_structured, cv.v AS client_version
           FROM m CROSS JOIN cv
           LEFT JOIN req ON m.is_response AND CAST(m.id AS VARCHAR) = req.id)
    SELECT method, tool, count(*) AS messages, count_if(is_response) AS responses,
           sum(bytes) AS bytes, max(bytes) AS max_bytes, count_if(is_error) AS is_error,
           count(error_code) AS errors, sum(content_blocks) AS content_blocks,
           count_if(has_structured) AS structured, any_value(client_version) AS client_version
    FROM f GROUP BY method, tool ORDER BY messages DESC, method, tool
    """
).fetchall()
for r in rows:
    print("\t".join("" if v is None else str(v) for v in r))
