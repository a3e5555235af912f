-- latency_groups: tools/call latency per tool x client name x client version, for `check` and
-- the report. Not a rule. Runs over all captures at once: percentiles of pieces do not add up.
-- latency: answered calls that were not cancelled nor timed out (response ts - request ts);
-- p50/p95/p99 are linear-interpolated quantiles (QUANTILE_CONT, as DuckDB's quantile_cont).
-- timeouts: calls cancelled with a "timed out" reason (the SDKs' McpError -32001 "Request
-- timed out") or answered with error -32001; waited_ms is how long the requester waited
-- before giving up (cancellation ts - request ts; the response ts for a -32001 answer).
-- Logical calls: this reads `calls` rows; multi-round-trip chains need one filter here.
WITH tool_calls AS (
  SELECT COALESCE(tool, '?') AS tool, COALESCE(client_name, '?') AS client_name,
         COALESCE(client_version, '?') AS client_version, outcome, latency_ms, req_ts_us, cancel_ts_us,
         CASE WHEN (cancelled AND (cancel_reason LIKE '%timed out%' OR cancel_reason LIKE '%-32001%')) OR error_code = -32001 THEN 1 ELSE 0 END AS timeout
  FROM calls
  WHERE method = 'tools/call'
),
timed AS (
  SELECT tool, client_name, client_version, timeout,
         CASE WHEN timeout = 0 AND outcome <> 'cancelled' THEN latency_ms ELSE NULL END AS latency_ms,
         CASE WHEN timeout = 1 THEN COALESCE((CAST(cancel_ts_us AS DOUBLE) - CAST(req_ts_us AS DOUBLE)) / 1000.0, latency_ms) ELSE NULL END AS waited_ms
  FROM tool_calls
)
SELECT tool, client_name, client_version, COUNT(*) AS calls, COUNT(latency_ms) AS timed,
       QUANTILE_CONT(latency_ms, 0.5) AS p50_ms, QUANTILE_CONT(latency_ms, 0.95) AS p95_ms,
       QUANTILE_CONT(latency_ms, 0.99) AS p99_ms, MAX(latency_ms) AS max_ms,
       SUM(timeout) AS timeouts, COUNT(waited_ms) AS timeouts_timed, MIN(waited_ms) AS timeout_min_ms, MAX(waited_ms) AS timeout_max_ms
FROM timed
GROUP BY tool, client_name, client_version
ORDER BY tool, client_name, client_version
