-- truncation_rates: per tool x client name x client version (server version in the detail):
-- calls, results truncated by a marker, calls lost (no response before the connection ended),
-- calls cancelled (the client gave up, usually a timeout), and the rate of results the model
-- did not get whole. One finding per group with anything truncated, lost or cancelled.
-- Calls are logical calls: a multi-round-trip chain (2026-07-28 `input_required` rounds and
-- their retries, `calls.chain_id`) counts once, by its last round (`chain_last`), with that
-- round's outcome and the chain's largest response (`chain_resp_bytes`); the rounds (the last
-- round's `round`) are named in the detail when there are more rounds than calls. An `input_required`
-- round is never truncated or lost.
-- Why: a truncated result is silent data loss for the model; rates per client version show
-- which hosts cut (Claude Code's 25,000-token cap, 25 KiB / 50 KB / 128 KiB caps in other
-- clients) and which servers cut themselves ("[Response truncated due to size limit]",
-- `_meta.truncated`, "[output truncated]").
-- Evidence: reference/field-notes.md "Truncation markers seen"; corpus stdio_py_truncation,
-- http_py_streamable. Markers: built in (model/message.rs) plus --truncation-marker REGEX.
-- Client logs: an `events` row of kind `result_over_client_cap` (Claude Code: `MCP tool "X"
-- response (N tokens) exceeds maximum allowed tokens (25000)`) is one call of that tool and
-- one truncated result, client `claude-code` (the phrase is Claude Code's), server the one the
-- log names: the client dropped the whole result. The log that says so holds no call row for
-- it (a log file is its own capture), so the event is the call; it is never matched with call
-- rows of other captures (a capture of the same traffic read beside the log counts the call
-- in each). The detail then names how many were over the cap and the largest token count.
-- scope: capture
-- title: Truncated, lost and cancelled results
-- severity error: results were lost (no response before the connection ended)
-- severity warn: results were truncated by a marker or cancelled by the client
-- advice: Paginate or summarise large results; when cutting, say so in structuredContent and give the model a way to fetch the rest.
-- causes:
--   no_response: calls lost: no response came before the connection ended.
--   result_truncated: results carried a truncation marker (text, structuredContent or _meta): the model got part of the result.
--   over_client_token_cap: the client's log says it dropped a result over its token cap (Claude Code's 25,000 tokens).
--   client_cancelled: the client cancelled the call (usually its timeout) and never used the result.
-- section: truncation
WITH tool_calls AS (
  SELECT capture, tool, client_name, client_version, server_name, server_version,
         CAST(CASE WHEN outcome = 'no_response' THEN 1 ELSE 0 END AS BIGINT) AS lost,
         CAST(CASE WHEN outcome = 'cancelled' THEN 1 ELSE 0 END AS BIGINT) AS gave_up,
         CAST(CASE WHEN truncated THEN 1 ELSE 0 END AS BIGINT) AS cut,
         CAST(0 AS BIGINT) AS over_cap, CAST(NULL AS BIGINT) AS tokens,
         CAST(chain_resp_bytes AS BIGINT) AS resp_bytes, CAST(round AS BIGINT) AS rounds
  FROM calls
  WHERE method = 'tools/call' AND chain_last
  UNION ALL
  SELECT capture, tool, 'claude-code' AS client_name, CAST(NULL AS STRING) AS client_version,
         server AS server_name, CAST(NULL AS STRING) AS server_version,
         CAST(0 AS BIGINT) AS lost, CAST(0 AS BIGINT) AS gave_up, CAST(1 AS BIGINT) AS cut,
         CAST(1 AS BIGINT) AS over_cap, CAST(tokens AS BIGINT) AS tokens,
         CAST(NULL AS BIGINT) AS resp_bytes, CAST(1 AS BIGINT) AS rounds
  FROM events
  WHERE kind = 'result_over_client_cap'
),
groups AS (
  SELECT capture, tool, client_name, client_version,
         MAX(COALESCE(server_name, '?')) AS server_name, MAX(COALESCE(server_version, '?')) AS server_version,
         COUNT(*) AS calls, SUM(rounds) AS rounds, SUM(cut) AS truncated, SUM(lost) AS lost, SUM(gave_up) AS cancelled, MAX(resp_bytes) AS max_resp_bytes,
         SUM(over_cap) AS over_cap, MAX(tokens) AS max_tokens
  FROM tool_calls
  GROUP BY capture, tool, client_name, client_version
)
SELECT 'truncation_rates' AS rule,
       CASE WHEN lost > 0 THEN 'error' ELSE 'warn' END AS severity,
       capture, CAST(NULL AS STRING) AS session, CAST(NULL AS STRING) AS rpc_id, tool,
       CONCAT(COALESCE(client_name, '?'), ' ', COALESCE(client_version, '?')) AS client,
       max_resp_bytes AS bytes,
       SUBSTR(CONCAT(
         CASE WHEN lost > 0 THEN ',no_response' ELSE '' END,
         CASE WHEN truncated > over_cap THEN ',result_truncated' ELSE '' END,
         CASE WHEN over_cap > 0 THEN ',over_client_token_cap' ELSE '' END,
         CASE WHEN cancelled > 0 THEN ',client_cancelled' ELSE '' END), 2) AS cause,
       CONCAT(CAST(truncated AS STRING), ' of ', CAST(calls AS STRING), ' calls truncated, ',
              CAST(lost AS STRING), ' lost, ', CAST(cancelled AS STRING), ' cancelled; rate ',
              CAST(ROUND(100.0 * (truncated + lost + cancelled) / calls, 1) AS STRING), '%; server ',
              server_name, ' ', server_version,
              CASE WHEN rounds > calls THEN CONCAT('; ', CAST(rounds AS STRING), ' rounds') ELSE '' END,
              CASE WHEN over_cap > 0 THEN CONCAT('; ', CAST(over_cap AS STRING), ' over the client token cap (largest ',
                                                 COALESCE(CAST(max_tokens AS STRING), '?'), ' tokens)') ELSE '' END) AS detail
FROM groups
WHERE truncated + lost + cancelled > 0
ORDER BY capture, tool, client
