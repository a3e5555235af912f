-- pagination_drift: cursor chains that lose or repeat items. One finding per problem page:
--   cursor_reused      a cursor sent again in the session (a loop: codebase-memory-mcp #1247)
--   cursor_not_issued  a cursor never issued in this session (foreign or forged)
--   not_followed       a next cursor nobody sent (for tools/list: tools the model never saw;
--                      Factory #7 50 of 101, open-webui #29879 20 of 44)
--   items_repeated / items_skipped  the cursor advanced less / more than the items returned
--                      (decoded base64 JSON offsets) and the next page was fetched
--   page_size_changed  the page size argument changed mid-chain
--   empty_next_cursor  nextCursor "" (end before 2026-07-28, "more" after it: cccc #50)
--   runaway_chain      more than 50 pages in one chain
-- Severity: error when items are lost or repeated (reuse, drift, an abandoned protocol list);
-- warn for suspicious cursors; info for a tool chain the client chose to stop, or a page size
-- change that lost nothing.
-- Evidence: reference/field-notes.md "Pagination failures"; corpus http_ts_streamable.
-- scope: capture
-- title: Pagination chains that drifted
-- severity error: items are lost or repeated (a reused cursor, drift, an abandoned protocol list, a runaway chain)
-- severity warn: a suspicious cursor (not issued, not after the last item, an empty next cursor)
-- severity info: a tool chain the client chose to stop, or a page size change that lost nothing
-- advice: Advance cursors by exactly the items returned, never return the cursor you were sent, and follow nextCursor until it is absent.
-- causes:
--   cursor_reused: a cursor sent again in the same session: the client loops over pages.
--   cursor_not_issued: a cursor this session never issued (foreign or forged).
--   not_followed: a next cursor nobody sent: for tools/list, tools the model never saw.
--   items_repeated: the cursor advanced less than the items returned: the next page repeats items.
--   items_skipped: the cursor advanced more than the items returned: items were never returned.
--   cursor_not_last_item: the cursor does not point after the page's last item.
--   page_size_changed: the page size argument changed mid-chain.
--   empty_next_cursor: nextCursor "": the end of the list before 2026-07-28, "more" after it.
--   runaway_chain: more than 50 pages in one chain.
-- columns: session
WITH p AS (
  SELECT pages.*,
         CASE WHEN chain IN ('tools/list', 'resources/list', 'resources/templates/list', 'prompts/list') THEN 'list' ELSE 'tool' END AS chain_kind,
         (cursor_out IS NOT NULL AND cursor_out <> '' AND NOT followed AND NOT COALESCE(cursor_out = cursor_in, false)) AS abandoned
  FROM pages
),
chain_sizes AS (
  SELECT capture, session, chain_id, COUNT(*) AS chain_pages FROM pages GROUP BY capture, session, chain_id
),
problems AS (
  SELECT p.*, c.chain_pages,
    CONCAT(
      CASE WHEN cursor_seen_before THEN ',cursor_reused' ELSE '' END,
      CASE WHEN cursor_in IS NOT NULL AND NOT cursor_issued_before THEN ',cursor_not_issued' ELSE '' END,
      CASE WHEN abandoned THEN ',not_followed' ELSE '' END,
      CASE WHEN followed AND repeated_items > 0 THEN ',items_repeated' ELSE '' END,
      CASE WHEN followed AND skipped_items > 0 THEN ',items_skipped' ELSE '' END,
      CASE WHEN cursor_matches_last_item = false THEN ',cursor_not_last_item' ELSE '' END,
      CASE WHEN page_size_changed THEN ',page_size_changed' ELSE '' END,
      CASE WHEN cursor_out = '' THEN ',empty_next_cursor' ELSE '' END,
      CASE WHEN page_no = 51 THEN ',runaway_chain' ELSE '' END) AS causes
  FROM p JOIN chain_sizes c ON p.capture = c.capture AND p.session = c.session AND p.chain_id = c.chain_id
)
SELECT 'pagination_drift' AS rule,
       CASE WHEN cursor_seen_before OR (followed AND (COALESCE(repeated_items, 0) > 0 OR COALESCE(skipped_items, 0) > 0)) OR page_no = 51
                 OR (chain_kind = 'list' AND abandoned)
            THEN 'error'
            WHEN (cursor_in IS NOT NULL AND NOT cursor_issued_before) OR COALESCE(cursor_matches_last_item, true) = false OR cursor_out = ''
            THEN 'warn'
            ELSE 'info' END AS severity,
       pr.capture, pr.session, pr.rpc_id,
       CASE WHEN chain_kind = 'tool' THEN chain ELSE CAST(NULL AS STRING) END AS tool,
       CONCAT(COALESCE(s.client_name, '?'), ' ', COALESCE(s.client_version, '?')) AS client,
       CAST(resp_bytes AS BIGINT) AS bytes,
       SUBSTR(causes, 2) AS cause,
       CONCAT(chain_id, ' page ', CAST(page_no AS STRING), ': ',
              COALESCE(CAST(items_returned AS STRING), '?'), ' items',
              CASE WHEN advance IS NOT NULL THEN CONCAT(', cursor advanced ', CAST(advance AS STRING)) ELSE '' END,
              CASE WHEN followed AND repeated_items > 0 THEN CONCAT(', ', CAST(repeated_items AS STRING), ' repeat on the next page') ELSE '' END,
              CASE WHEN followed AND skipped_items > 0 THEN CONCAT(', ', CAST(skipped_items AS STRING), ' skipped before the next page') ELSE '' END,
              CASE WHEN chain_kind = 'list' AND abandoned THEN CONCAT(', next cursor never followed: the client never saw what came after these ', COALESCE(CAST(items_returned AS STRING), '?'), ' items') ELSE '' END,
              CASE WHEN cursor_issued_in IS NOT NULL THEN CONCAT(', cursor issued in session ', cursor_issued_in) ELSE '' END,
              CASE WHEN cursor_decoded IS NOT NULL THEN CONCAT(', cursor ', cursor_decoded) ELSE '' END,
              '') AS detail
FROM problems pr
LEFT JOIN sessions s ON pr.capture = s.capture AND pr.session = s.session
WHERE causes <> ''
ORDER BY pr.capture, pr.session, pr.req_seq
