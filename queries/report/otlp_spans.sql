-- otlp_spans: one row per request (calls) for `mcpsift export otlp`, with its session's
-- transport. Not a rule. Every call becomes one span, each round of a multi-round-trip chain
-- its own span (a round is one JSON-RPC request); `chain_id` and `round` keep them together.
-- timeout: cancelled with a "timed out" reason (McpError -32001) or answered with -32001.
WITH sess AS (
  SELECT capture, session, MIN(CAST(transport AS STRING)) AS transport
  FROM sessions
  GROUP BY capture, session
)
SELECT c.capture, c.session, s.transport, c.rpc_id, c.method, c.tool, c.client_name, c.client_version,
       c.server_name, c.server_version, c.protocol_version, c.req_seq, c.req_ts_us, c.resp_ts_us, c.cancel_ts_us,
       c.req_bytes, c.resp_bytes, CAST(c.outcome AS STRING) AS outcome, c.error_code, c.error_message,
       c.chain_id, c.round, c.traceparent, CAST(c.direction AS STRING) AS direction,
       CASE WHEN (c.cancelled AND (c.cancel_reason LIKE '%timed out%' OR c.cancel_reason LIKE '%-32001%')) OR c.error_code = -32001 THEN 1 ELSE 0 END AS timeout
FROM calls c
LEFT JOIN sess s ON c.capture = s.capture AND c.session = s.session
ORDER BY c.capture, c.req_seq
