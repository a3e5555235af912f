-- near_limit_frames: frames at or above warn_ratio x a reader limit, one finding per frame,
-- naming every limit it reaches. A frame is an error only against a limit of the peer that
-- reads it: the session's client for server-to-client frames, its server for requests
-- (`sessions.client_family` / `server_family` against `limits.reader`; an SDK limit also
-- applies to a reader whose family is unknown, a product's limit only to that product). Other
-- clients' SDK limits are warnings naming who they would break; another product's limit (Codex,
-- Claude Code) is named in the detail of a frame that has a finding, never a finding alone. A request a server answered 2xx was read, whatever its size; one answered 413 (or
-- 400) over a limit was refused.
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
-- Limits: the `limits` table (enabled rows, each with its reader and source), overridable with
-- --limit NAME=BYTES[:RATIO]. Token budgets (Claude Code) compare the result's text bytes / 4.
-- causes:
--   over_reader_limit: at or over a limit of the peer that reads the frame.
--   near_reader_limit: near a limit of the peer that reads the frame.
--   read_despite_limit: over a limit of the server's family, but the server answered it 2xx: it read it.
--   over_other_client_limit: past a limit of another known client, which would break on it.
--   near_other_client_limit: near an SDK limit of another client.
-- scope: capture
-- title: Frames near reader limits
-- severity error: the frame is at or over a limit of the peer that reads it: that reader drops it or the connection
-- severity warn: the frame is near a limit of its reader, or past a limit of another known client it would break
-- advice: Keep results well under the smallest reader: paginate, or return a resource_link above 1 MiB instead of inline text or base64 images.
-- section: frame_sizes
WITH lim AS (
  SELECT name, bytes AS limit_bytes, tokens, warn_ratio, scope, reader, reader_kind FROM limits WHERE enabled
),
-- Only frames past the lowest warning size meet the limits (keeps the join small; a scalar
-- subquery, so the Parquet scan skips the row groups of smaller frames).
big AS (
  SELECT f.capture, f.session, f.seq, f.rpc_id, f.tool, f.direction, f.transport, f.wire_bytes, f.text_bytes,
         f.blob_bytes_b64, f.http_user_agent, f.http_status
  FROM frames f
  WHERE f.wire_bytes >= (SELECT CAST(CEIL(MIN(warn_ratio * limit_bytes)) AS BIGINT) FROM lim)
),
-- Who reads each frame: the client for server-to-client frames, the server for requests.
readers AS (
  SELECT b.*, CASE WHEN b.direction = 's2c' THEN s.client_family ELSE s.server_family END AS reader_family
  FROM big b
  LEFT JOIN sessions s ON b.capture = s.capture AND b.session = s.session
),
measured AS (
  SELECT r.capture, r.session, r.seq, r.rpc_id, r.tool, r.direction, r.wire_bytes, r.blob_bytes_b64, r.http_status,
         r.reader_family, lim.name, lim.limit_bytes, lim.tokens, lim.reader, lim.reader_kind,
         CASE WHEN lim.tokens IS NOT NULL THEN r.text_bytes ELSE r.wire_bytes END AS size,
         lim.warn_ratio
  FROM readers r CROSS JOIN lim
  WHERE ((lim.scope = 'stdio' AND r.transport IN ('stdio', 'hostlog', 'jsonl'))
      OR (lim.scope = 'http_request' AND r.transport = 'http' AND r.direction = 'c2s')
      OR (lim.scope = 'result' AND r.direction = 's2c')
      OR (lim.scope = 'sse_event' AND r.transport = 'sse' AND r.direction = 's2c'))
),
judged AS (
  SELECT m.*,
         (m.size >= m.limit_bytes) AS over,
         (m.reader = 'any' OR m.reader = m.reader_family OR (m.reader_family IS NULL AND m.reader_kind = 'sdk')) AS reads,
         (m.direction = 'c2s' AND m.http_status >= 200 AND m.http_status < 300) AS read_ok,
         (m.direction = 'c2s' AND m.http_status IN (400, 413)) AS refused
  FROM measured m
  WHERE m.size >= m.warn_ratio * m.limit_bytes
),
hits AS (
  SELECT j.*,
         CASE WHEN j.over AND ((j.reads AND NOT COALESCE(j.read_ok, false)) OR COALESCE(j.refused, false)) THEN 2
              WHEN j.reads OR j.reader_kind = 'sdk' THEN 1
              ELSE 0 END AS level,
         CASE WHEN j.over AND ((j.reads AND NOT COALESCE(j.read_ok, false)) OR COALESCE(j.refused, false)) THEN 'over_reader_limit'
              WHEN j.reads AND j.over THEN 'over_reader_limit_read'
              WHEN j.reads THEN 'near_reader_limit'
              WHEN j.over THEN 'over_other_client_limit'
              ELSE 'near_other_client_limit' END AS why
  FROM judged j
),
per_frame AS (
  SELECT capture, session, seq, rpc_id, tool, direction, wire_bytes, blob_bytes_b64,
         MAX(level) AS level,
         MIN(CASE WHEN level = 0 THEN 9 WHEN why = 'over_reader_limit' THEN 1 WHEN why = 'over_reader_limit_read' THEN 2
                  WHEN why = 'near_reader_limit' THEN 3 WHEN why = 'over_other_client_limit' THEN 4 ELSE 5 END) AS cause_rank,
         STRING_AGG(CONCAT(CASE WHEN over THEN 'over ' ELSE 'near ' END, name, ' ',
                           CASE WHEN tokens IS NOT NULL
                                THEN CONCAT(CAST(tokens AS STRING), ' tokens (~', CAST(CAST(size / 4 AS BIGINT) AS STRING), ' tokens of text, ')
                                ELSE CONCAT(CAST(limit_bytes AS STRING), ' (') END,
                           CAST(ROUND(100.0 * size / limit_bytes, 1) AS STRING), '%)',
                           CASE WHEN why = 'over_reader_limit' AND COALESCE(refused, false) THEN ': the server refused it'
                                WHEN why = 'over_reader_limit' THEN CONCAT(': the reading ', CASE WHEN direction = 's2c' THEN 'client' ELSE 'server' END,
                                     CASE WHEN reader_family IS NULL THEN ' (not recognised; an SDK limit applies)' ELSE CONCAT(' (', reader_family, ')') END,
                                     ' drops it or the connection')
                                WHEN why = 'over_reader_limit_read' THEN ': the server answered it, so it read it'
                                WHEN why = 'over_other_client_limit' THEN CONCAT(': would break ', reader, ' readers, not this ', CASE WHEN direction = 's2c' THEN 'client' ELSE 'server' END)
                                WHEN why = 'near_other_client_limit' THEN CONCAT(' of ', reader, ' readers')
                                ELSE '' END), '; ') AS reached
  FROM hits
  GROUP BY capture, session, seq, rpc_id, tool, direction, wire_bytes, blob_bytes_b64
)
SELECT 'near_limit_frames' AS rule,
       CASE WHEN p.level = 2 THEN 'error' ELSE 'warn' END AS severity,
       p.capture, p.session, p.rpc_id, p.tool,
       CONCAT(COALESCE(s.client_name, '?'), ' ', COALESCE(s.client_version, '?')) AS client,
       p.wire_bytes AS bytes,
       CASE p.cause_rank WHEN 1 THEN 'over_reader_limit' WHEN 2 THEN 'read_despite_limit' WHEN 3 THEN 'near_reader_limit'
                         WHEN 4 THEN 'over_other_client_limit' ELSE 'near_other_client_limit' END AS cause,
       CONCAT(p.direction, ' frame of ', CAST(p.wire_bytes AS STRING), ' bytes: ', p.reached,
              CASE WHEN p.blob_bytes_b64 > 0
                   THEN CONCAT('; base64 is ', CAST(ROUND(100.0 * p.blob_bytes_b64 / p.wire_bytes, 1) AS STRING), '% of it')
                   ELSE '' END,
              CASE WHEN p.seq = (CASE WHEN p.direction = 'c2s' THEN s.last_seq_c2s ELSE s.last_seq_s2c END)
                   THEN CASE WHEN s.ending = 'abrupt' THEN '; the session died right after it'
                             ELSE '; nothing followed it in this direction' END
                   ELSE '' END) AS detail
FROM per_frame p
LEFT JOIN sessions s ON p.capture = s.capture AND p.session = s.session
WHERE p.level > 0
ORDER BY p.capture, p.seq
