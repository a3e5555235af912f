-- diff_groups: one side of `mcpsift diff`: per tool x client name x client version, over
-- logical tools/call calls (a multi-round-trip chain once, with its last round's outcome, as
-- truncation_rates and latency_groups count). Not a rule. Runs over the side's `calls` after
-- its cohort filter (`--where-a` / `--where-b`); `--by tool|client` blanks the key columns
-- before this runs, so the groups merge.
-- counts: calls, truncated (a marker on the last round), errors (tool_error or rpc_error),
-- validation_errors (any validation verdict other than none), answered (a response with
-- bytes); result sizes: QUANTILE_CONT of the last round's response bytes (the answer the
-- client got); latency: first round's request to last round's answer, answered calls
-- neither cancelled nor timed out (the definition of latency_groups.sql). The logical call is
-- the row `calls.chain_last` marks, whatever the cohort filter keeps of its earlier rounds.
WITH logical AS (
  SELECT COALESCE(tool, '?') AS tool, COALESCE(client_name, '?') AS client_name,
         COALESCE(client_version, '?') AS client_version, outcome,
         CASE WHEN truncated THEN 1 ELSE 0 END AS cut,
         CASE WHEN outcome IN ('tool_error', 'rpc_error') THEN 1 ELSE 0 END AS failed,
         CASE WHEN validation IS NOT NULL AND validation <> 'none' THEN 1 ELSE 0 END AS invalid,
         CAST(resp_bytes AS DOUBLE) AS resp_bytes,
         CASE WHEN timed_out OR outcome = 'cancelled' THEN NULL ELSE chain_latency_ms END AS latency_ms
  FROM calls
  WHERE method = 'tools/call' AND chain_last
)
SELECT tool, client_name, client_version, COUNT(*) AS calls,
       SUM(cut) AS truncated, SUM(failed) AS errors, SUM(invalid) AS validation_errors,
       COUNT(resp_bytes) AS answered,
       QUANTILE_CONT(resp_bytes, 0.5) AS resp_p50_bytes, QUANTILE_CONT(resp_bytes, 0.95) AS resp_p95_bytes, MAX(resp_bytes) AS resp_max_bytes,
       COUNT(latency_ms) AS timed,
       QUANTILE_CONT(latency_ms, 0.5) AS latency_p50_ms, QUANTILE_CONT(latency_ms, 0.95) AS latency_p95_ms
FROM logical
GROUP BY tool, client_name, client_version
ORDER BY tool, client_name, client_version
