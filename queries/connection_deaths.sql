-- connection_deaths: sessions that ended abruptly, with the likely cause. `-32000 Connection
-- closed` hides: an oversize line, text on stdout ("Unexpected token 'S', "Starting MCP
-- server" is not valid JSON"), a final line without newline, a crashed server, a timeout
-- (`notifications/cancelled` with "Request timed out"), a host-logged transport close.
-- Sessions that survived stdout pollution (non-JSON lines from the server) are a warn.
-- A stdio session whose largest frame is at or over the TypeScript SDK's reader limit is
-- counted too: the wire looks complete, but a TS client closed the pipe at that frame.
-- Evidence: reference/field-notes.md "Connection deaths"; corpus stdio_ts_size_limit phase D,
-- stdio_ts_pollution, stdio_ts_timeout.
-- scope: capture
-- title: Connection deaths
-- severity error: the session ended abruptly, or a TS client would have dropped it at its largest frame
-- severity warn: the session survived non-JSON lines on stdout
-- advice: Log only to stderr, end every message with a newline, stay under reader limits, and answer or cancel every request.
-- causes:
--   over_ts_reader_limit: the session's largest frame is at or over the TypeScript SDK's stdio reader limit: a TS client closes the pipe at that frame.
--   last_frame_incomplete: the last frame was cut: the peer died or the pipe closed mid-message.
--   transport_closed: the host logged that the transport closed unexpectedly.
--   requests_unanswered: requests were never answered before the connection ended.
--   stdout_pollution: the server wrote non-JSON lines where the client reads messages (the session survived them when it is the only cause).
--   client_timeout: the client cancelled requests after its timeout before the session ended.
-- columns: session
-- excerpt: last_error
WITH ts_limit AS (SELECT bytes AS ts_bytes FROM limits WHERE name = 'ts_sdk_stdio'),
s AS (
  SELECT sessions.*, ts_bytes,
         (transport IN ('stdio', 'hostlog', 'jsonl') AND max_frame_bytes >= ts_bytes) AS over_reader
  FROM sessions CROSS JOIN ts_limit
)
SELECT 'connection_deaths' AS rule,
       CASE WHEN ending = 'abrupt' OR over_reader THEN 'error' ELSE 'warn' END AS severity,
       capture, session, CAST(NULL AS STRING) AS rpc_id,
       CAST(NULL AS STRING) AS tool,
       CONCAT(COALESCE(client_name, '?'), ' ', COALESCE(client_version, '?')) AS client,
       CASE WHEN ending = 'abrupt' OR over_reader THEN max_frame_bytes ELSE non_json_s2c_bytes END AS bytes,
       SUBSTR(CONCAT(
         CASE WHEN over_reader THEN ',over_ts_reader_limit' ELSE '' END,
         CASE WHEN ending = 'abrupt' THEN CONCAT(',', COALESCE(end_causes, '')) ELSE '' END,
         CASE WHEN ending <> 'abrupt' AND non_json_s2c > 0 THEN ',stdout_pollution' ELSE '' END), 2) AS cause,
       CONCAT(
         CASE WHEN over_reader THEN CONCAT('largest frame ', CAST(max_frame_bytes AS STRING), ' bytes is over the TypeScript stdio reader limit (', CAST(ts_bytes AS STRING), '): a TS client drops the connection there; ') ELSE '' END,
         COALESCE(end_cause, ''),
         CASE WHEN ending <> 'abrupt' AND non_json_s2c > 0
              THEN CONCAT('server wrote ', CAST(non_json_s2c AS STRING), ' non-JSON line(s) where the client reads messages: clients report parse errors and a message glued to such a line is lost; the session survived')
              ELSE '' END) AS detail
FROM s
WHERE ending = 'abrupt' OR over_reader OR non_json_s2c > 0
ORDER BY capture, session
