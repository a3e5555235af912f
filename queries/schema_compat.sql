-- schema_compat: tools/list entries clients reject or silently cut. One finding per tool
-- problem, plus one per list for payload size and tool count:
--   SL001 inputSchema root `type` is not "object" (the TS client's listTools() throws a
--         ZodError for the whole list)
--   SL004 an array without `items` (rejected by strict validators, e.g. OpenAI function calling)
--   SL007 duplicate tool name in one list, or across the servers of one capture
--   dialect: `$schema` other than 2020-12 and draft-07 (e.g. 2019-09), tuple-form `items`.
--   draft-07 outputSchema (warn): Claude Code's default validator accepts only 2020-12, so
--         every call of such a tool fails at call time while tools/list succeeds
--         (claude-code #88882, open). The TypeScript SDK's zod conversion emits draft-07 for
--         every McpServer tool (typescript-sdk #745), so many servers are affected; a
--         draft-07 inputSchema is accepted and not flagged.
--   description over 2048 UTF-16 units (Claude Code cuts it silently: claude-code #41593)
--   list payload over the `tools_list_payload` budget (Cursor: ~220-290 KB lists showed 0 tools)
--   tool count over 40 (info), 80 (warn), 100 (error): clients drop the extra tools
-- Evidence: reference/field-notes.md; corpus lint_catalog_* (planted defects and controls).
-- scope: capture
-- title: Schema compatibility
-- severity error: clients reject the tool or the whole list, or silently cut it
-- severity warn: some clients reject or cut it (a dialect, a draft-07 outputSchema Claude Code rejects, a large list)
-- severity info: a tool count past 40, where some clients start dropping tools
-- causes:
--   root_not_object: SL001 the inputSchema root type is not object: the TypeScript client's listTools() rejects the whole list.
--   array_without_items: SL004 an array without items: strict validators (OpenAI function calling) reject the tool.
--   tuple_items: tuple-form (draft-07 style) items: 2020-12 validators read them differently.
--   description_too_long: a description over 2048 UTF-16 units: Claude Code cuts it silently.
--   output_dialect_unsupported: an outputSchema $schema other than 2020-12 and draft-07.
--   draft07_output_schema: a draft-07 outputSchema: Claude Code's validator accepts only 2020-12 and fails every call of the tool.
--   input_dialect_unsupported: an inputSchema $schema other than 2020-12 and draft-07.
--   duplicate_name: SL007 a tool name listed more than once in one list.
--   name_across_servers: SL007 the same tool name served by more than one server of the capture.
--   list_payload_over_budget: a tools/list page over the tools_list_payload budget: clients have shown no tools at all.
--   too_many_tools: more than 40 tools in one page: clients drop tools past 40 to 100.
-- advice: Give every inputSchema root type object and every array items; declare outputSchema in 2020-12 (or without `$schema`); keep names unique, descriptions under 2048 UTF-16 units and tools/list small.
WITH budget AS (SELECT bytes AS budget_bytes FROM limits WHERE name = 'tools_list_payload'),
-- Pages listing a name twice first (fewer rows than names), then their names: grouping every
-- tool row by four keys was most of this rule's time on a fleet.
dup_pages AS (
  SELECT page FROM tools GROUP BY capture, session, page HAVING COUNT(*) > COUNT(DISTINCT tool)
),
dups AS (
  SELECT capture, session, page, tool, COUNT(*) AS n FROM tools
  WHERE page IN (SELECT page FROM dup_pages)
  GROUP BY capture, session, page, tool HAVING COUNT(*) > 1
),
-- Each tool's checks, named once: what the cause text, the cause tokens and the filter read.
checked AS (
  SELECT capture, session, tool, list_payload_bytes, schema_bytes, input_root_type, arrays_without_items,
    first_array_without_items, description_utf16, output_dialect, input_dialect, tuple_items,
    input_root_type <> 'object' AS root_not_object,
    arrays_without_items > 0 AS array_without_items,
    description_utf16 > 2048 AS description_too_long,
    output_dialect IS NOT NULL AND output_dialect NOT LIKE '%2020-12%' AND output_dialect NOT LIKE '%draft-07%' AS output_dialect_unsupported,
    output_dialect LIKE '%draft-07%' AS draft07_output_schema,
    input_dialect IS NOT NULL AND input_dialect NOT LIKE '%2020-12%' AND input_dialect NOT LIKE '%draft-07%' AS input_dialect_unsupported
  FROM tools
),
per_tool AS (
  SELECT capture, session, tool, list_payload_bytes, schema_bytes,
    CONCAT(
      CASE WHEN root_not_object THEN CONCAT('SL001 inputSchema root type is ', input_root_type, '; ') ELSE '' END,
      CASE WHEN array_without_items THEN CONCAT('SL004 ', CAST(arrays_without_items AS STRING), ' array(s) without items, first at ', first_array_without_items, '; ') ELSE '' END,
      CASE WHEN tuple_items THEN 'tuple-form items (draft-07 style); ' ELSE '' END,
      CASE WHEN description_too_long THEN CONCAT('description is ', CAST(description_utf16 AS STRING), ' UTF-16 units, ', CAST(description_utf16 - 2048 AS STRING), ' cut at 2048; ') ELSE '' END,
      CASE WHEN output_dialect_unsupported THEN CONCAT('outputSchema dialect ', output_dialect, '; ') ELSE '' END,
      CASE WHEN draft07_output_schema THEN 'draft-07 outputSchema: Claude Code fails every call of this tool (claude-code #88882: its validator accepts only 2020-12; tools/list still succeeds); ' ELSE '' END,
      CASE WHEN input_dialect_unsupported THEN CONCAT('inputSchema dialect ', input_dialect, '; ') ELSE '' END
    ) AS causes,
    CONCAT(
      CASE WHEN root_not_object THEN ',root_not_object' ELSE '' END,
      CASE WHEN array_without_items THEN ',array_without_items' ELSE '' END,
      CASE WHEN tuple_items THEN ',tuple_items' ELSE '' END,
      CASE WHEN description_too_long THEN ',description_too_long' ELSE '' END,
      CASE WHEN output_dialect_unsupported THEN ',output_dialect_unsupported' ELSE '' END,
      CASE WHEN draft07_output_schema THEN ',draft07_output_schema' ELSE '' END,
      CASE WHEN input_dialect_unsupported THEN ',input_dialect_unsupported' ELSE '' END
    ) AS tokens,
    description_utf16
  FROM checked
  -- Only tools with a cause: the text is built for those alone.
  WHERE root_not_object OR array_without_items OR tuple_items OR description_too_long
     OR output_dialect_unsupported OR draft07_output_schema OR input_dialect_unsupported
),
tool_findings AS (
  SELECT 'schema_compat' AS rule,
         CASE WHEN causes LIKE '%SL00%' THEN 'error' ELSE 'warn' END AS severity,
         capture, session, CAST(NULL AS STRING) AS rpc_id, tool, schema_bytes AS bytes, SUBSTR(tokens, 2) AS cause, causes AS detail
  FROM per_tool WHERE causes <> ''
),
dup_findings AS (
  SELECT 'schema_compat' AS rule, 'error' AS severity, capture, session, CAST(NULL AS STRING) AS rpc_id, tool,
         CAST(n AS BIGINT) AS bytes, 'duplicate_name' AS cause, CONCAT('SL007 tool name listed ', CAST(n AS STRING), ' times on page ', CAST(page AS STRING), '; ') AS detail
  FROM dups
),
lists AS (
  SELECT capture, session, page, MAX(list_payload_bytes) AS payload, MAX(list_tools) AS tool_count
  FROM tools GROUP BY capture, session, page
),
list_findings AS (
  SELECT 'schema_compat' AS rule,
         CASE WHEN payload > budget_bytes OR tool_count > 100 THEN 'error' WHEN tool_count > 80 THEN 'warn' ELSE 'info' END AS severity,
         capture, session, CAST(NULL AS STRING) AS rpc_id, CAST(NULL AS STRING) AS tool, payload AS bytes,
         SUBSTR(CONCAT(
           CASE WHEN payload > budget_bytes THEN ',list_payload_over_budget' ELSE '' END,
           CASE WHEN tool_count > 40 THEN ',too_many_tools' ELSE '' END), 2) AS cause,
         CONCAT(
           CASE WHEN payload > budget_bytes THEN CONCAT('tools/list page ', CAST(page AS STRING), ' is ', CAST(payload AS STRING), ' bytes, over the ', CAST(budget_bytes AS STRING), '-byte client budget; ') ELSE '' END,
           CASE WHEN tool_count > 40 THEN CONCAT(CAST(tool_count AS STRING), ' tools in one page (clients drop tools past 40-100); ') ELSE '' END) AS detail
  FROM lists CROSS JOIN budget
  WHERE payload > budget_bytes OR tool_count > 40
),
cross_server AS (
  SELECT capture, tool, COUNT(DISTINCT session) AS sessions
  FROM (SELECT t.capture, t.session, t.tool, s.server_name FROM tools t JOIN sessions s ON t.capture = s.capture AND t.session = s.session) x
  GROUP BY capture, tool
  HAVING COUNT(DISTINCT server_name) > 1
),
cross_findings AS (
  SELECT 'schema_compat' AS rule, 'warn' AS severity, capture, CAST(NULL AS STRING) AS session, CAST(NULL AS STRING) AS rpc_id, tool,
         CAST(sessions AS BIGINT) AS bytes, 'name_across_servers' AS cause, 'SL007 the same tool name is served by more than one server in this capture; ' AS detail
  FROM cross_server
),
all_findings AS (
  SELECT * FROM tool_findings UNION ALL SELECT * FROM dup_findings UNION ALL SELECT * FROM list_findings UNION ALL SELECT * FROM cross_findings
)
SELECT a.rule, a.severity, a.capture, a.session, a.rpc_id, a.tool,
       CONCAT(COALESCE(s.client_name, '?'), ' ', COALESCE(s.client_version, '?')) AS client,
       a.bytes, a.cause, a.detail
FROM all_findings a
LEFT JOIN sessions s ON a.capture = s.capture AND a.session = s.session
ORDER BY a.capture, a.session, a.tool
