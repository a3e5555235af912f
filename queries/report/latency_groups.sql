-- latency_groups: tools/call latency per tool x client name x client version, for `check` and
-- the report. Not a rule. Runs on each piece of whole captures (chains never span captures),
-- one row per logical tool call with its group's keys as stored (NULL named '?' by mcpsift),
-- its timeout flag, its latency and its wait. mcpsift groups them as it reads each piece
-- (`report::gather::latency`): counts, the known latencies of each group gathered over the
-- pieces, and p50/p95/p99 and max taken once. Quantiles of pieces do not add up; memory holds
-- one number per timed call, not the calls. Grouping three string keys in the query
-- (ARRAY_AGG per group) cost polars more than the rules beside it: its keys row-encoded,
-- concatenated and hashed.
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
-- A NULL key and a real '?' are one group (mcpsift names NULL '?').
SELECT tool, client_name, client_version,
       COALESCE(timed_out, FALSE) AS timeout,
       CASE WHEN NOT timed_out AND outcome <> 'cancelled' THEN chain_latency_ms ELSE NULL END AS latency_ms,
       waited_ms
FROM calls
WHERE method = 'tools/call' AND chain_last
