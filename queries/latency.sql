-- latency: per capture x tool x client name x client version, tools whose p95 latency is an
-- outlier among the capture's tools, and calls that hit the requester's timeout (cancelled
-- with "Request timed out", the SDKs' McpError -32001, or answered with error -32001), with
-- how long the requester waited before giving up.
-- Why: "the tool silently did nothing" is often a slow tool the client stopped waiting for
-- (the TypeScript SDK's default request timeout is 60 s; clients set less); a p95 far above
-- the capture's other tools names the tool to fix before it reaches the timeout.
-- Threshold (the `params` row below; override by copying this file into a folder given to
-- --queries, which replaces the built-in): a group is an outlier when its p95 is at least
-- outlier_ratio (5) times the median latency of all the capture's timed tool calls and at
-- least min_p95_ms (500 ms: below that a user hardly notices), in a capture with at least
-- min_calls (3) timed tool calls.
-- Latency counts answered calls that were neither cancelled nor timed out; p95 is the
-- linear-interpolated quantile (QUANTILE_CONT in polars and DuckDB). Calls are logical
-- calls: a multi-round-trip chain (`calls.chain_id`) counts once, by its last round
-- (`calls.chain_last`), with that round's outcome, timed from its first round's request to
-- its last round's answer (`calls.chain_latency_ms`); `calls.timed_out` and
-- `calls.waited_ms` say which calls timed out and how long the requester waited. The model
-- fills these columns (model/chains.rs), so every query counts calls the same way.
-- Evidence: corpus stdio_ts_timeout, stdio_pyserver_timeout; samples/transcript slow_export.
-- scope: capture
-- title: Slow tools and timeouts
-- severity error: calls hit the requester's timeout (the user saw an error, the tool may still have run)
-- severity warn: the tool's p95 latency is an outlier among the capture's tools
-- advice: Answer within the clients' timeouts: make slow tools asynchronous (return a handle, report progress with notifications/progress), cache, or split the work; raise client timeouts only for tools that need it.
-- causes:
--   timeouts: calls cancelled after the requester's timeout ("Request timed out", -32001), with how long it waited.
--   p95_outlier: the tool's p95 latency is at least 5 times the median latency of the capture's tool calls (and at least 500 ms).
-- section: latency
WITH params AS (
  SELECT 5.0 AS outlier_ratio, 500.0 AS min_p95_ms, 3 AS min_calls
),
tool_calls AS (
  SELECT capture, tool, client_name, client_version, timed_out,
         CASE WHEN NOT timed_out AND outcome <> 'cancelled' THEN chain_latency_ms ELSE NULL END AS latency_ms,
         waited_ms
  FROM calls
  WHERE method = 'tools/call' AND chain_last
),
groups AS (
  SELECT capture, tool, client_name, client_version, COUNT(latency_ms) AS timed,
         QUANTILE_CONT(latency_ms, 0.95) AS p95_ms, MAX(latency_ms) AS max_ms,
         SUM(CASE WHEN timed_out THEN 1 ELSE 0 END) AS timeouts, MAX(waited_ms) AS waited_ms
  FROM tool_calls
  GROUP BY capture, tool, client_name, client_version
),
typical AS (
  SELECT capture, QUANTILE_CONT(latency_ms, 0.5) AS median_ms, COUNT(latency_ms) AS timed_calls
  FROM tool_calls
  GROUP BY capture
),
flagged AS (
  SELECT g.capture, g.tool, g.client_name, g.client_version, g.timed, g.p95_ms, g.max_ms, g.timeouts, g.waited_ms, t.median_ms,
         CASE WHEN t.timed_calls >= p.min_calls AND g.p95_ms >= p.min_p95_ms AND g.p95_ms >= p.outlier_ratio * t.median_ms THEN 1 ELSE 0 END AS outlier
  FROM groups g
  JOIN typical t ON g.capture = t.capture
  CROSS JOIN params p
)
SELECT 'latency' AS rule,
       CASE WHEN timeouts > 0 THEN 'error' ELSE 'warn' END AS severity,
       capture, CAST(NULL AS STRING) AS session, CAST(NULL AS STRING) AS rpc_id, tool,
       CONCAT(COALESCE(client_name, '?'), ' ', COALESCE(client_version, '?')) AS client,
       CAST(NULL AS BIGINT) AS bytes,
       CASE WHEN timeouts > 0 AND outlier = 1 THEN 'timeouts,p95_outlier' WHEN timeouts > 0 THEN 'timeouts' ELSE 'p95_outlier' END AS cause,
       CONCAT(
         CASE WHEN timeouts > 0
              THEN CONCAT(CAST(timeouts AS STRING), ' call(s) timed out after ',
                          CASE WHEN waited_ms IS NULL THEN 'an unknown wait (no timestamps)' ELSE CONCAT(CAST(ROUND(waited_ms, 1) AS STRING), ' ms') END)
              ELSE '' END,
         CASE WHEN timed > 0
              THEN CONCAT(CASE WHEN timeouts > 0 THEN '; ' ELSE '' END, 'p95 ', CAST(ROUND(p95_ms, 1) AS STRING), ' ms, max ', CAST(ROUND(max_ms, 1) AS STRING), ' ms over ',
                          CAST(timed AS STRING), ' answered call(s); median of all tool calls in this capture ',
                          CAST(ROUND(median_ms, 1) AS STRING), ' ms')
              ELSE '' END) AS detail
FROM flagged
WHERE outlier = 1 OR timeouts > 0
ORDER BY capture, tool, client
