-- protocol_conformance: what 2026-07-28 requires of results and what it deprecates, and HTTP
-- answers that say one thing and mean another. One finding per conversation and method (or
-- per request, for re-issued ones and mislabelled 413s).
--   list_without_cache_fields  a 2026-07-28 list result (`*/list`, `server/discover`) without
--                              `ttlMs` or `cacheScope`: both are required (`CacheableResult`),
--                              and clients such as the TypeScript SDK cache lists by them
--   result_without_result_type a result to a 2026-07-28 request without `resultType`: required;
--                              a client treats a missing one as `complete`, so an
--                              `input_required` round goes unseen
--   deprecated_feature         Roots (`roots/list`), Sampling (`sampling/createMessage`) and
--                              Logging (`logging/setLevel`, `notifications/message`) in a
--                              2026-07-28 conversation, and the HTTP+SSE transport (a request
--                              answered 202 with its response on a separate SSE stream)
--   mislabelled_413            HTTP 400 whose body says the request was too large: the
--                              TypeScript legacy SSE server's `PayloadTooLargeError: request
--                              entity too large` (raw-body's 4 MB limit); clients that retry
--                              400s resend it, clients that handle 413 do not see one
--   reissued_request           a request re-issued after its stream broke (same method and
--                              params, new id, as 2026-07-28 requires; `calls.retry_of`): the
--                              first one is `retried`, not lost
-- Evidence: reference/mcp-wire-facts.md §5 (2026-07-28 results, CacheableResult) and §2.1
-- (HTTP+SSE); samples http_ts2 (a stream broken mid-result, re-issued).
-- scope: capture
-- title: Protocol conformance
-- severity warn: a result misses a field 2026-07-28 requires, or an HTTP 400 hides a 413
-- severity info: a deprecated feature, or a request re-issued after a broken stream
-- advice: Answer 2026-07-28 requests with resultType on every result and ttlMs and cacheScope on every list; answer oversize requests with 413; move off Roots, Sampling, Logging and HTTP+SSE.
-- causes:
--   list_without_cache_fields: a 2026-07-28 list result without ttlMs or cacheScope.
--   result_without_result_type: a result to a 2026-07-28 request without resultType.
--   deprecated_feature: a feature 2026-07-28 deprecates (Roots, Sampling, Logging, HTTP+SSE).
--   mislabelled_413: HTTP 400 for a request that was too large.
--   reissued_request: a request re-issued after its stream broke.
-- columns: session
WITH modern AS (
  SELECT capture, session, rpc_id, method, tool, client_name, client_version, resp_bytes, result_type, ttl_ms, cache_scope, outcome, retry_of, req_seq
  FROM calls
  WHERE protocol_version >= '2026-07-28' AND method <> 'initialize'
),
-- What a 2026-07-28 result lacks: one row per conversation, method and cause.
gaps AS (
  SELECT capture, session, method, cause, MIN(rpc_id) AS rpc_id, MAX(client_name) AS client_name,
         MAX(client_version) AS client_version, COUNT(*) AS n, MAX(resp_bytes) AS bytes
  FROM (
    SELECT modern.*, 'list_without_cache_fields' AS cause FROM modern
    WHERE (method LIKE '%/list' OR method = 'server/discover') AND outcome = 'ok' AND (ttl_ms IS NULL OR cache_scope IS NULL)
    UNION ALL
    SELECT modern.*, 'result_without_result_type' AS cause FROM modern
    WHERE outcome IN ('ok', 'tool_error') AND result_type IS NULL
  ) g
  GROUP BY capture, session, method, cause
),
deprecated AS (
  SELECT f.capture, f.session, f.method, MIN(f.rpc_id) AS rpc_id, COUNT(*) AS n, MAX(f.wire_bytes) AS bytes
  FROM (SELECT capture, session, method, rpc_id, wire_bytes FROM frames
        WHERE method IN ('roots/list', 'sampling/createMessage', 'logging/setLevel', 'notifications/message')
          AND kind IN ('request', 'notification')
          -- No frame is read when no session is 2026-07-28 (a constant the scan is given).
          AND (SELECT MAX(protocol_version) FROM sessions) >= '2026-07-28') f
  JOIN (SELECT capture, session FROM sessions WHERE protocol_version >= '2026-07-28') s
    ON f.capture = s.capture AND f.session = s.session
  GROUP BY f.capture, f.session, f.method
),
legacy_sse AS (
  SELECT capture, session, MIN(rpc_id) AS rpc_id, COUNT(*) AS n, MAX(wire_bytes) AS bytes
  FROM frames
  WHERE kind = 'request' AND direction = 'c2s' AND transport = 'http' AND http_status = 202
  GROUP BY capture, session
),
mislabelled AS (
  SELECT capture, session, text
  FROM events
  WHERE kind = 'http_status' AND http_status = 400
    AND (LOWER(text) LIKE '%too large%' OR LOWER(text) LIKE '%entity too large%' OR LOWER(text) LIKE '%exceeds%bytes%')
),
reissued AS (
  SELECT capture, session, rpc_id, method, tool, client_name, client_version, resp_bytes, retry_of
  FROM calls
  WHERE retry_of IS NOT NULL
),
found AS (
  SELECT 'warn' AS severity,
         g.capture AS capture,
         g.session AS session,
         g.rpc_id AS rpc_id,
         CAST(NULL AS STRING) AS tool,
         g.client_name AS client_name,
         g.client_version AS client_version,
         CAST(g.bytes AS BIGINT) AS bytes,
         g.cause AS cause,
         CONCAT(CAST(g.n AS STRING), ' ', g.method,
                CASE WHEN g.cause = 'list_without_cache_fields'
                     THEN ' result(s) without ttlMs or cacheScope (required on 2026-07-28 list results)'
                     ELSE ' result(s) without resultType (required in 2026-07-28; read as complete)' END) AS detail
  FROM gaps g
  UNION ALL
  SELECT 'info' AS severity,
         d.capture AS capture,
         d.session AS session,
         d.rpc_id AS rpc_id,
         CAST(NULL AS STRING) AS tool,
         s.client_name AS client_name,
         s.client_version AS client_version,
         CAST(d.bytes AS BIGINT) AS bytes,
         'deprecated_feature' AS cause,
         CONCAT(CAST(d.n AS STRING), ' ', d.method, ' message(s) in a 2026-07-28 conversation: ',
                CASE WHEN d.method = 'roots/list' THEN 'Roots' WHEN d.method = 'sampling/createMessage' THEN 'Sampling' ELSE 'Logging' END,
                ' is deprecated') AS detail
  FROM deprecated d
  LEFT JOIN sessions s ON d.capture = s.capture AND d.session = s.session
  UNION ALL
  SELECT 'info' AS severity,
         l.capture AS capture,
         l.session AS session,
         l.rpc_id AS rpc_id,
         CAST(NULL AS STRING) AS tool,
         s.client_name AS client_name,
         s.client_version AS client_version,
         CAST(l.bytes AS BIGINT) AS bytes,
         'deprecated_feature' AS cause,
         CONCAT(CAST(l.n AS STRING), ' request(s) answered 202 with the response on a separate SSE stream: the HTTP+SSE transport, deprecated since 2025-03-26') AS detail
  FROM legacy_sse l
  LEFT JOIN sessions s ON l.capture = s.capture AND l.session = s.session
  UNION ALL
  SELECT 'warn' AS severity,
         m.capture AS capture,
         m.session AS session,
         CAST(NULL AS STRING) AS rpc_id,
         CAST(NULL AS STRING) AS tool,
         s.client_name AS client_name,
         s.client_version AS client_version,
         CAST(NULL AS BIGINT) AS bytes,
         'mislabelled_413' AS cause,
         CONCAT('HTTP 400 for a request that was too large (a 413 in disguise): ', SUBSTR(m.text, 1, 200)) AS detail
  FROM mislabelled m
  LEFT JOIN sessions s ON m.capture = s.capture AND m.session = s.session
  UNION ALL
  SELECT 'info' AS severity,
         r.capture AS capture,
         r.session AS session,
         r.rpc_id AS rpc_id,
         r.tool AS tool,
         r.client_name AS client_name,
         r.client_version AS client_version,
         CAST(r.resp_bytes AS BIGINT) AS bytes,
         'reissued_request' AS cause,
         CONCAT(r.method, CASE WHEN r.tool IS NOT NULL THEN CONCAT(' ', r.tool) ELSE '' END,
                ' re-issued after its stream broke: it replaces the request at seq ', CAST(r.retry_of AS STRING), ' (retried, not lost)') AS detail
  FROM reissued r
)
SELECT 'protocol_conformance' AS rule, severity, capture, session, rpc_id, tool,
       CONCAT(COALESCE(client_name, '?'), ' ', COALESCE(client_version, '?')) AS client,
       bytes, cause, detail
FROM found
ORDER BY capture, session, cause, rpc_id
