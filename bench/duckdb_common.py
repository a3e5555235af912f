"""The per-message facts the DuckDB peers extract from a stdio log (duckdb_facts.py writes them
as rows, duckdb_aggregate.py aggregates them): one SELECT over the file's lines, shared so both
peers extract exactly the same facts.
"""

# `seq`: the line number, for peers that keep rows in order.
MESSAGE_FACTS = """
    CREATE TEMP TABLE m AS
    SELECT {seq}strlen(CAST(j AS VARCHAR)) AS bytes,
           json_extract(j, '$.id') AS id,
           json_extract_string(j, '$.method') AS method,
           json_extract_string(j, '$.params.name') AS req_tool,
           json_extract_string(j, '$.params.clientInfo.version') AS client_version,
           CAST(json_extract(j, '$.result.isError') AS BOOLEAN) AS is_error,
           CAST(json_extract(j, '$.error.code') AS BIGINT) AS error_code,
           json_array_length(j, '$.result.content') AS content_blocks,
           json_exists(j, '$.result.structuredContent') AS has_structured,
           json_exists(j, '$.result') OR json_exists(j, '$.error') AS is_response
    FROM read_json_objects(?, format='newline_delimited', maximum_object_size=67108864) t(j)
    """


def message_facts(seq: bool) -> str:
    return MESSAGE_FACTS.format(seq="row_number() OVER () AS seq,\n           " if seq else "")
