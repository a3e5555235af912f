-- tool_definition_changed: a tool whose definition (inputSchema, outputSchema, description,
-- annotations, title) differs between sessions of the same server name, in time order across
-- captures, or from the baseline `check --baseline FILE` compares with (saved by
-- `mcpsift baseline`). One finding per tool and change, naming each difference: a field added
-- or removed, a type changed, a description longer or shorter by N characters.
-- Why: clients cache tools/list (the TypeScript SDK for ttlMs; hosts for the session) and
-- validate arguments and results against the schema they cached: a changed inputSchema makes
-- calls fail with -32602 or routing headers mismatch (-32020); a changed outputSchema makes a
-- validating client reject results; a changed description changes what the model does. A
-- daily audit's first question is what changed since the last good day.
-- The comparison is computed in Rust (`model/tool_changes.rs`: the `tool_changes` table,
-- built at query time when a rule names it); this file flags it.
-- title: Tool definitions that changed
-- severity warn: against the baseline, a tool was removed or its definition changed (clients holding the old one break or behave differently)
-- severity info: a tool added, or a definition that differs from the previous session of a server of that name (across captures in one run these may be different deployments that share a name)
-- advice: Version tool changes: keep old fields accepted, add new ones as optional, send notifications/tools/list_changed, and check the changes against yesterday's baseline before deploying.
-- causes:
--   tool_changed: the tool's definition differs from the previous session's (or the baseline's).
--   tool_removed: the tool is no longer listed.
--   tool_added: a new tool is listed.
-- columns: session
SELECT 'tool_definition_changed' AS rule,
       CASE WHEN t.against = 'baseline' AND t.change <> 'added' THEN 'warn' ELSE 'info' END AS severity,
       t.capture, t.session, CAST(NULL AS STRING) AS rpc_id, t.tool,
       CONCAT(COALESCE(s.client_name, '?'), ' ', COALESCE(s.client_version, '?')) AS client,
       CAST(NULL AS BIGINT) AS bytes,
       CONCAT('tool_', t.change) AS cause,
       CONCAT(t.server, ' ', COALESCE(t.previous_version, '?'), ' -> ', COALESCE(t.server_version, '?'),
              CASE WHEN t.against = 'baseline' THEN ' (against the baseline): ' ELSE CONCAT(' (since session ', t.previous_session, '): ') END,
              t.tool, ' ', t.change, ': ', t.difference) AS detail
FROM tool_changes t
LEFT JOIN sessions s ON t.capture = s.capture AND t.session = s.session
ORDER BY t.capture, t.session, t.tool
