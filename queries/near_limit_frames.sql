-- near_limit_frames: frames at or above warn_ratio x a reader limit (warn), or at or over the
-- limit itself (error); one finding per frame, naming every limit it reaches.
-- Why: the TypeScript SDK's stdio reader (>= 1.30.0) closes the connection when a line
-- reaches 10,485,760 bytes (typescript-sdk #2239): callers only see `-32000 Connection
-- closed`, then `Not connected`. Codex rejects 8 MiB stdout lines (openai/codex #31805); SDK
-- HTTP servers answer 413 above 4 MiB request bodies; the `mcp` 2.x Python client rejects an
-- SSE event over 1 MiB (`py_client_sse_event`, scope `sse_event`: server-to-client frames
-- carried in SSE events to a client whose User-Agent is `python-httpx2/...`, which only the
-- 2.x client sends; 1.x clients use httpx and have no such cap) while it accepts larger JSON
-- bodies. Sizes are bytes on the wire: CJK text
-- is 3 bytes a character and base64 makes images 4/3 larger (the base64 share is reported).
-- Evidence: reference/field-notes.md "Reader limits"; corpus stdio_ts_size_limit phases C-D.
-- Limits: the `limits` table (enabled rows), overridable with --limit NAME=BYTES[:RATIO].
-- scope: capture
-- title: Frames near reader limits
-- severity error: the frame is at or over a reader limit: that reader drops it or the connection
-- severity warn: the frame is at or above warn_ratio of a reader limit
-- advice: Keep results well under the smallest reader: paginate, or return a resource_link above 1 MiB instead of inline text or base64 images.
-- section: frame_sizes
WITH lim AS (
  SELECT name, bytes AS limit_bytes, warn_ratio, scope FROM limits WHERE enabled
),
lowest AS (
  SELECT MIN(warn_ratio * limit_bytes) AS warn_bytes FROM lim
),
-- Only frames past the lowest warning size meet the limits (keeps the join small).
big AS (
  SELECT f.capture, f.session, f.seq, f.rpc_id, f.tool, f.direction, f.transport, f.wire_bytes, f.blob_bytes_b64, f.http_user_agent
  FROM frames f CROSS JOIN lowest w
  WHERE f.wire_bytes >= w.warn_bytes
),
hits AS (
  SELECT f.capture, f.session, f.seq, f.rpc_id, f.tool, f.direction, f.wire_bytes, f.blob_bytes_b64,
         lim.name, lim.limit_bytes,
         CASE WHEN f.wire_bytes >= lim.limit_bytes THEN 2 ELSE 1 END AS level
  FROM big f CROSS JOIN lim
  WHERE f.wire_bytes >= lim.warn_ratio * lim.limit_bytes
    AND ((lim.scope = 'stdio' AND f.transport IN ('stdio', 'hostlog', 'jsonl'))
      OR (lim.scope = 'http_request' AND f.transport = 'http' AND f.direction = 'c2s')
      OR (lim.scope = 'result' AND f.direction = 's2c')
      OR (lim.scope = 'sse_event' AND f.transport = 'sse' AND f.direction = 's2c' AND f.http_user_agent LIKE 'python-httpx2/%'))
),
per_frame AS (
  SELECT capture, session, seq, rpc_id, tool, direction, wire_bytes, blob_bytes_b64,
         MAX(level) AS level,
         STRING_AGG(CONCAT(CASE WHEN level = 2 THEN 'over ' ELSE 'near ' END, name, ' ',
                           CAST(limit_bytes AS STRING), ' (',
                           CAST(ROUND(100.0 * wire_bytes / limit_bytes, 1) AS STRING), '%)'), '; ') AS reached
  FROM hits
  GROUP BY capture, session, seq, rpc_id, tool, direction, wire_bytes, blob_bytes_b64
),
last_in_direction AS (
  SELECT capture, session, direction, MAX(seq) AS last_seq FROM frames GROUP BY capture, session, direction
)
SELECT 'near_limit_frames' AS rule,
       CASE WHEN p.level = 2 THEN 'error' ELSE 'warn' END AS severity,
       p.capture, p.session, p.rpc_id, p.tool,
       CONCAT(COALESCE(s.client_name, '?'), ' ', COALESCE(s.client_version, '?')) AS client,
       p.wire_bytes AS bytes,
       CAST(NULL AS STRING) AS cause,
       CONCAT(p.direction, ' frame of ', CAST(p.wire_bytes AS STRING), ' bytes: ', p.reached,
              CASE WHEN p.blob_bytes_b64 > 0
                   THEN CONCAT('; base64 is ', CAST(ROUND(100.0 * p.blob_bytes_b64 / p.wire_bytes, 1) AS STRING), '% of it')
                   ELSE '' END,
              CASE WHEN p.seq = l.last_seq AND s.ending = 'abrupt' THEN '; the session died right after it'
                   WHEN p.seq = l.last_seq THEN '; nothing followed it in this direction'
                   ELSE '' END) AS detail
FROM per_frame p
JOIN last_in_direction l ON p.capture = l.capture AND p.session = l.session AND p.direction = l.direction
LEFT JOIN sessions s ON p.capture = s.capture AND p.session = s.session
ORDER BY p.capture, p.seq
