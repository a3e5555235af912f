-- pagination_drift: pagination walks that lose or repeat items. One finding per problem page.
-- A walk is one conversation's traversal of one list (`pages.walk`): it starts at a request
-- without a cursor and follows each nextCursor to the request that sends it, on any
-- connection. A later walk re-sending the same cursor strings (a client re-listing after its
-- cache expired or after an error) is a new walk, never a loop.
--   cursor_reused      a cursor sent again within one walk (a loop: codebase-memory-mcp #1247)
--   cursor_not_issued  a cursor never issued in this conversation (foreign or forged)
--   not_followed       a next cursor the conversation never sent though it went on (for
--                      tools/list: tools the model never saw; Factory #7 50 of 101,
--                      open-webui #29879 20 of 44); a walk the capture cut off is not one
--   items_repeated     the page's next cursor advanced too little: the next page returned items
--                      the walk already had, by identity (name, uri, uriTemplate, id, ...);
--                      when items have no keys, a decoded cursor that advanced less than the
--                      items returned
--   items_skipped      items the list had before and after this walk that no page of it
--                      returned, by identity; or a decoded cursor that advanced more than the
--                      items returned
--   page_size_changed  the page size argument changed mid-walk
--   empty_next_cursor  nextCursor "" (end before 2026-07-28, "more" after it: cccc #50)
--   runaway_chain      more than 50 pages in one walk
-- Severity: error when items are lost or repeated (a loop, drift, an abandoned protocol list);
-- warn for suspicious cursors; info for a tool walk the client chose to stop, or a page size
-- change that lost nothing.
-- Evidence: reference/field-notes.md "Pagination failures"; corpus http_ts_streamable;
-- samples stdio_ts2 and http_ts2 (a tools/list page of 5 whose cursor advances 3).
-- scope: capture
-- title: Pagination walks that drifted
-- severity error: items are lost or repeated (a cursor loop, items repeated or skipped, an abandoned protocol list, a runaway walk)
-- severity warn: a suspicious cursor (not issued, not after the last item, an empty next cursor)
-- severity info: a tool walk the client chose to stop, or a page size change that lost nothing
-- advice: Advance cursors by exactly the items returned, never return the cursor you were sent, and follow nextCursor until it is absent.
-- causes:
--   cursor_reused: a cursor sent again within one walk: the client loops over pages.
--   cursor_not_issued: a cursor this conversation never issued (foreign or forged).
--   not_followed: a next cursor the conversation never sent: for tools/list, tools the model never saw.
--   items_repeated: the next page returned items the walk already had: this page's cursor advanced too little.
--   items_skipped: items the list holds were returned by no page of the walk.
--   cursor_not_last_item: the cursor does not point after the page's last item.
--   page_size_changed: the page size argument changed mid-walk.
--   empty_next_cursor: nextCursor "": the end of the list before 2026-07-28, "more" after it.
--   runaway_chain: more than 50 pages in one walk.
-- columns: session
WITH p AS (
  SELECT pages.*,
         CASE WHEN chain IN ('tools/list', 'resources/list', 'resources/templates/list', 'prompts/list') THEN 'list' ELSE 'tool' END AS chain_kind,
         COALESCE(walk_end = 'abandoned', false) AS abandoned,
         (COALESCE(repeated_items, 0) > 0 OR (repeated_items IS NULL AND followed AND COALESCE(offset_repeats, 0) > 0)) AS repeats,
         (COALESCE(skipped_items, 0) > 0 OR (followed AND COALESCE(offset_skips, 0) > 0)) AS skips
  FROM pages
),
problems AS (
  SELECT p.*,
    CONCAT(
      CASE WHEN cursor_seen_before THEN ',cursor_reused' ELSE '' END,
      CASE WHEN cursor_in IS NOT NULL AND NOT cursor_issued_before THEN ',cursor_not_issued' ELSE '' END,
      CASE WHEN abandoned THEN ',not_followed' ELSE '' END,
      CASE WHEN repeats THEN ',items_repeated' ELSE '' END,
      CASE WHEN skips THEN ',items_skipped' ELSE '' END,
      CASE WHEN cursor_matches_last_item = false THEN ',cursor_not_last_item' ELSE '' END,
      CASE WHEN page_size_changed THEN ',page_size_changed' ELSE '' END,
      CASE WHEN cursor_out = '' THEN ',empty_next_cursor' ELSE '' END,
      CASE WHEN page_no = 51 THEN ',runaway_chain' ELSE '' END) AS causes
  FROM p
),
-- The pages with a problem, before the joins: the calls are then read for those pages only.
found AS (
  SELECT * FROM problems WHERE causes <> ''
)
SELECT 'pagination_drift' AS rule,
       CASE WHEN cursor_seen_before OR repeats OR skips OR page_no = 51 OR (chain_kind = 'list' AND abandoned)
            THEN 'error'
            WHEN (cursor_in IS NOT NULL AND NOT cursor_issued_before) OR COALESCE(cursor_matches_last_item, true) = false OR cursor_out = ''
            THEN 'warn'
            ELSE 'info' END AS severity,
       pr.capture, pr.session, pr.rpc_id,
       CASE WHEN chain_kind = 'tool' THEN chain ELSE CAST(NULL AS STRING) END AS tool,
       CONCAT(COALESCE(c.client_name, s.client_name, '?'), ' ', COALESCE(c.client_version, s.client_version, '?')) AS client,
       CAST(pr.resp_bytes AS BIGINT) AS bytes,
       SUBSTR(causes, 2) AS cause,
       CONCAT(walk, ' page ', CAST(page_no AS STRING), ': ',
              COALESCE(CAST(items_returned AS STRING), '?'), ' items',
              CASE WHEN advance IS NOT NULL THEN CONCAT(', cursor advanced ', CAST(advance AS STRING)) ELSE '' END,
              CASE WHEN COALESCE(repeated_items, 0) > 0
                   THEN CONCAT(', next cursor advanced too little: the next page returned ', CAST(repeated_items AS STRING), ' of the walk''s items again (', COALESCE(item_key_field, '?'), ': ', COALESCE(repeated_keys, ''), ')')
                   WHEN repeats THEN CONCAT(', ', CAST(offset_repeats AS STRING), ' repeat on the next page')
                   ELSE '' END,
              CASE WHEN COALESCE(skipped_items, 0) > 0
                   THEN CONCAT(', ', CAST(skipped_items AS STRING), ' returned by the walks before and after this one but by no page of it (', COALESCE(item_key_field, '?'), ': ', COALESCE(skipped_keys, ''), ')')
                   ELSE '' END,
              CASE WHEN followed AND COALESCE(offset_skips, 0) > 0 THEN CONCAT(', ', CAST(offset_skips AS STRING), ' skipped before the next page') ELSE '' END,
              CASE WHEN chain_kind = 'list' AND abandoned THEN CONCAT(', next cursor never followed: the client never saw what came after these ', COALESCE(CAST(items_returned AS STRING), '?'), ' items') ELSE '' END,
              CASE WHEN cursor_issued_in IS NOT NULL THEN CONCAT(', cursor issued in session ', cursor_issued_in) ELSE '' END,
              CASE WHEN cursor_decoded IS NOT NULL THEN CONCAT(', cursor ', cursor_decoded) ELSE '' END,
              '') AS detail
FROM found pr
LEFT JOIN sessions s ON pr.capture = s.capture AND pr.session = s.session
LEFT JOIN (SELECT capture, session, req_seq, client_name, client_version FROM calls
           WHERE req_seq IN (SELECT req_seq FROM found)
             AND (cursor_in IS NOT NULL OR cursor_out IS NOT NULL OR method LIKE '%/list')) c
       ON pr.capture = c.capture AND pr.session = c.session AND pr.req_seq = c.req_seq
ORDER BY pr.capture, pr.session, pr.req_seq
