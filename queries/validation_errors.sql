-- validation_errors: tool results a validating client rejects, or that are really output
-- schema failures. One finding per call, causes listed in order of severity:
--   server_output      isError whose text is a server-side output validation failure
--                      ("Output validation error: ...", FastMCP "N validation error for X")
--   client_structured  JSON-RPC -32602/-32600 about structured content
--   predicted_reject   structuredContent fails the tool's outputSchema from the same
--                      session's tools/list (extra properties under additionalProperties:false)
--   error_with_structured  isError result carrying structuredContent (servers skip the check,
--                      a TS client still validates it and throws, hiding the real error)
--   missing_structured outputSchema declared, no structuredContent, not an error
--   empty_content      `content: []` beside structuredContent
--   text_disagrees     text (JSON, or key=N) says something else than structuredContent
-- Client logs: an `events` row of kind `output_schema_rejected` (a client's log saying
-- `MCP error -32602: Structured content does not match the tool's output schema: ...` or
-- `-32600 ... has an output schema but did not return structured content`) is a
-- client_structured finding for the tool it names: the client said it rejected the result.
-- No call row goes with it (the log is its own capture), so bytes and rpc_id are null.
-- Evidence: reference/field-notes.md "Output validation"; repomix #833, git-mcp-server #40;
-- corpus stdio_ts_size_limit phases A-B, stdio_py_truncation.
-- scope: capture
-- title: Validation errors
-- severity error: a validating client rejects the result, or the server failed its own output schema
-- severity warn: the result is accepted, but content and structuredContent disagree or one is empty
-- advice: Return structuredContent that matches outputSchema exactly; omit structuredContent on isError results; keep text and structuredContent in agreement.
-- causes:
--   server_output: isError results whose text is a server-side output validation failure: the tool ran, its output did not match its own outputSchema.
--   client_structured: JSON-RPC errors (-32602/-32600) about structured content.
--   predicted_reject: structuredContent that fails the tool's outputSchema from the same session's tools/list: a validating client rejects the result.
--   error_with_structured: isError results carrying structuredContent: servers skip the check, validating clients still check it and throw, hiding the real error.
--   missing_structured: outputSchema declared but no structuredContent in a successful result.
--   empty_content: structuredContent beside an empty content array: clients that show only content show nothing.
--   text_disagrees: the text block says something else than structuredContent: the model and the user see different answers.
WITH flagged AS (
  SELECT capture, session, rpc_id, tool, client_name, client_version, resp_bytes, validation,
         validation_detail, error_with_structured, missing_structured, empty_content, text_disagrees, note,
         CONCAT(
           CASE WHEN validation = 'server_output' THEN ',server_output' ELSE '' END,
           CASE WHEN validation = 'client_structured' THEN ',client_structured' ELSE '' END,
           CASE WHEN validation = 'predicted_reject' THEN ',predicted_reject' ELSE '' END,
           CASE WHEN error_with_structured THEN ',error_with_structured' ELSE '' END,
           CASE WHEN missing_structured THEN ',missing_structured' ELSE '' END,
           CASE WHEN empty_content THEN ',empty_content' ELSE '' END,
           CASE WHEN text_disagrees THEN ',text_disagrees' ELSE '' END) AS causes
  FROM calls
  WHERE method = 'tools/call'
    AND (validation <> 'none' OR error_with_structured OR missing_structured OR empty_content OR text_disagrees)
),
findings AS (
  SELECT 'validation_errors' AS rule,
         CASE WHEN validation <> 'none' OR error_with_structured OR missing_structured THEN 'error' ELSE 'warn' END AS severity,
         capture, session, rpc_id, tool,
         CONCAT(COALESCE(client_name, '?'), ' ', COALESCE(client_version, '?')) AS client,
         CAST(resp_bytes AS BIGINT) AS bytes,
         SUBSTR(causes, 2) AS cause,
         COALESCE(validation_detail, note, '') AS detail
  FROM flagged
  UNION ALL
  SELECT 'validation_errors' AS rule, 'error' AS severity, capture, session, CAST(NULL AS STRING) AS rpc_id, tool,
         '? ?' AS client, CAST(NULL AS BIGINT) AS bytes, 'client_structured' AS cause, text AS detail
  FROM events
  WHERE kind = 'output_schema_rejected'
)
SELECT rule, severity, capture, session, rpc_id, tool, client, bytes, cause, detail
FROM findings
ORDER BY capture, session, rpc_id
