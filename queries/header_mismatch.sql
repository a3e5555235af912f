-- header_mismatch: 2026-07-28 HTTP requests whose routing headers disagree with the body, and
-- the errors a server answers for them. A Streamable HTTP POST carries `MCP-Protocol-Version`
-- (must equal `_meta["io.modelcontextprotocol/protocolVersion"]`), `Mcp-Method` (the body's
-- `method`), `Mcp-Name` (`params.name` of tools/call and prompts/get, `params.uri` of
-- resources/read) and one `Mcp-Param-{Name}` per tool argument whose inputSchema property has
-- `"x-mcp-header": "{Name}"` (values that are not safe ASCII as `=?base64?...?=`). Proxies and
-- load balancers route on these headers without reading the body, so a server rejects a
-- disagreement with HTTP 400 and:
--   -32020 HeaderMismatch: a header is missing or differs from the body. The spec's recovery
--          is the client's: re-list tools (the header's source is the inputSchema, so a call
--          to a tool the client has not listed, or whose schema changed, sends the wrong set)
--          and resend once; the `mcp` 2.x Python client does exactly that.
--   -32021 MissingRequiredClientCapability: the request needs a client capability the
--          `_meta` clientCapabilities did not declare (`data.requiredCapabilities`).
--   -32022 UnsupportedProtocolVersion: the server does not speak the request's version
--          (`data.supported`); the client should retry with a supported one, not fall back.
-- One finding per request: the headers found to disagree (`frames.header_mismatch`; the
-- Mcp-Param check needs the tool's inputSchema from an earlier tools/list in the capture)
-- and/or the error the server answered.
-- Evidence: reference/mcp-wire-facts.md §2.5 and §6.3; samples/http_py2 (mcp 2.3.0: a call
-- before the tool was listed, -32020, re-list, resend).
-- scope: capture
-- title: Routing header mismatches
-- severity error: a header disagrees with the body, or the server rejected the request for its headers (-32020) or a missing capability (-32021)
-- severity warn: the server does not support the request's protocol version (-32022)
-- advice: Derive the routing headers from the body at send time, from the tool's current inputSchema: re-list tools when a call fails with -32020 and resend once; send only protocol versions the server's server/discover listed.
-- causes:
--   header_differs: a routing header is missing or says something else than the body.
--   rejected_32020: the server answered -32020 HeaderMismatch.
--   missing_capability_32021: the server answered -32021: a client capability the request needs was not declared.
--   unsupported_version_32022: the server answered -32022: it does not support the request's protocol version.
WITH req AS (
  SELECT capture, seq, header_mismatch FROM frames
  WHERE direction = 'c2s' AND header_mismatch IS NOT NULL
),
-- Calls that may be flagged, filtered before the join: the filter then reads only the calls
-- it keeps (req is a few values, put in as a list where the engine cannot filter by a join).
candidates AS (
  SELECT capture, session, rpc_id, tool, client_name, client_version, req_bytes, error_code, error_message, req_seq
  FROM calls
  WHERE req_seq IN (SELECT seq FROM req) OR error_code IN (-32020, -32021, -32022)
),
flagged AS (
  SELECT c.capture, c.session, c.rpc_id, c.tool, c.client_name, c.client_version, c.req_bytes, c.error_code, c.error_message,
         r.header_mismatch
  FROM candidates c
  LEFT JOIN req r ON c.capture = r.capture AND c.req_seq = r.seq
  WHERE r.header_mismatch IS NOT NULL OR c.error_code IN (-32020, -32021, -32022)
)
SELECT 'header_mismatch' AS rule,
       CASE WHEN header_mismatch IS NULL AND error_code = -32022 THEN 'warn' ELSE 'error' END AS severity,
       capture, session, rpc_id, tool,
       CONCAT(COALESCE(client_name, '?'), ' ', COALESCE(client_version, '?')) AS client,
       req_bytes AS bytes,
       SUBSTR(CONCAT(
         CASE WHEN header_mismatch IS NOT NULL THEN ',header_differs' ELSE '' END,
         CASE WHEN error_code = -32020 THEN ',rejected_32020' ELSE '' END,
         CASE WHEN error_code = -32021 THEN ',missing_capability_32021' ELSE '' END,
         CASE WHEN error_code = -32022 THEN ',unsupported_version_32022' ELSE '' END), 2) AS cause,
       CONCAT(
         CASE WHEN header_mismatch IS NOT NULL THEN CONCAT('headers: ', header_mismatch) ELSE '' END,
         CASE WHEN header_mismatch IS NOT NULL AND error_code IS NOT NULL THEN '; ' ELSE '' END,
         CASE WHEN error_code = -32020 THEN CONCAT('-32020 HeaderMismatch: ', COALESCE(error_message, ''), ' (the client should re-list tools and resend once)')
              WHEN error_code = -32021 THEN CONCAT('-32021 MissingRequiredClientCapability: ', COALESCE(error_message, ''))
              WHEN error_code = -32022 THEN CONCAT('-32022 UnsupportedProtocolVersion: ', COALESCE(error_message, ''))
              ELSE '' END) AS detail
FROM flagged
ORDER BY capture, session, rpc_id
