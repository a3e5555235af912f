-- latency_groups: tools/call latency per tool x client name x client version, for `check` and
-- the report. Not a rule. Runs on each piece of whole captures (chains never span captures),
-- one row per group and piece: its counts, and its latencies as a list (ARRAY_AGG). Quantiles
-- of pieces do not add up, so mcpsift gathers each group's known latencies over the pieces and
-- takes p50/p95/p99 and max of them once (`report::gather::latency`): memory holds one number
-- per timed call, not the calls.
-- latency: answered calls that were not cancelled nor timed out (response ts - request ts);
-- p50/p95/p99 are linear-interpolated quantiles (QUANTILE_CONT, as DuckDB's quantile_cont).
-- timeouts: calls cancelled with a "timed out" reason (the SDKs' McpError -32001 "Request
-- timed out") or answered with error -32001; waited_ms is how long the requester waited
-- before giving up (cancellation ts - request ts; the response ts for a -32001 answer).
-- Logical calls: a multi-round-trip chain (2026-07-28 `input_required` rounds and their
-- retries, `calls.chain_id`) counts once, with the outcome of its last round (as
-- truncation_rates counts); its latency runs from the first round's request to the last
-- round's answer: what the model and the user waited for the tool's result, elicitation
-- turns included (each round's own time is in `calls.latency_ms`). A timeout of the last
-- round waited from the first request too.
WITH chains AS (
  SELECT capture, chain_id, MAX(round) AS last_round, MIN(req_ts_us) AS first_req_ts_us
  FROM calls
  WHERE method = 'tools/call'
  GROUP BY capture, chain_id
),
tool_calls AS (
  SELECT COALESCE(c.tool, '?') AS tool, COALESCE(c.client_name, '?') AS client_name,
         COALESCE(c.client_version, '?') AS client_version, c.outcome,
         CASE WHEN k.last_round = 1 THEN c.latency_ms
              ELSE (CAST(c.resp_ts_us AS DOUBLE) - CAST(k.first_req_ts_us AS DOUBLE)) / 1000.0 END AS latency_ms,
         k.first_req_ts_us AS req_ts_us, c.cancel_ts_us,
         CASE WHEN (c.cancelled AND (c.cancel_reason LIKE '%timed out%' OR c.cancel_reason LIKE '%-32001%')) OR c.error_code = -32001 THEN 1 ELSE 0 END AS timeout
  FROM calls c
  JOIN chains k ON c.capture = k.capture AND c.chain_id = k.chain_id AND c.round = k.last_round
  WHERE c.method = 'tools/call'
),
timed AS (
  SELECT tool, client_name, client_version, timeout,
         CASE WHEN timeout = 0 AND outcome <> 'cancelled' THEN latency_ms ELSE NULL END AS latency_ms,
         CASE WHEN timeout = 1 THEN COALESCE((CAST(cancel_ts_us AS DOUBLE) - CAST(req_ts_us AS DOUBLE)) / 1000.0, latency_ms) ELSE NULL END AS waited_ms
  FROM tool_calls
)
SELECT tool, client_name, client_version, COUNT(*) AS calls,
       ARRAY_AGG(latency_ms) AS latency_ms,
       SUM(timeout) AS timeouts, COUNT(waited_ms) AS timeouts_timed, MIN(waited_ms) AS timeout_min_ms, MAX(waited_ms) AS timeout_max_ms
FROM timed
GROUP BY tool, client_name, client_version
