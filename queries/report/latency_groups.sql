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
-- round waited from the first request too. The model fills these facts once
-- (`calls.chain_last`, `chain_latency_ms`, `timed_out`, `waited_ms`: model/chains.rs).
-- Groups are keyed by the columns as stored and named '?' after grouping (cheaper than
-- rewriting every row's key); a NULL and a real '?' then meet in mcpsift's merge of pieces.
WITH timed AS (
  SELECT tool, client_name, client_version,
         CASE WHEN timed_out THEN 1 ELSE 0 END AS timeout,
         CASE WHEN NOT timed_out AND outcome <> 'cancelled' THEN chain_latency_ms ELSE NULL END AS latency_ms,
         waited_ms
  FROM calls
  WHERE method = 'tools/call' AND chain_last
)
SELECT COALESCE(tool, '?') AS tool, COALESCE(client_name, '?') AS client_name, COALESCE(client_version, '?') AS client_version, COUNT(*) AS calls,
       ARRAY_AGG(latency_ms) AS latency_ms,
       SUM(timeout) AS timeouts, COUNT(waited_ms) AS timeouts_timed, MIN(waited_ms) AS timeout_min_ms, MAX(waited_ms) AS timeout_max_ms
FROM timed
GROUP BY tool, client_name, client_version
