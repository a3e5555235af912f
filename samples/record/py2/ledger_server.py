"""ledger-service: an `mcp` 2.x `MCPServer` speaking 2026-07-28, over stdio or Streamable HTTP.
Tools: get_balance (structured), approve_refund (multi-round-trip elicitation: confirm, then a
reason), export_ledger (progress + a large text result), query_region (an `x-mcp-header`
parameter), list_accounts. `tools/list` is paged 3 tools a page with opaque cursors, and carries
ttlMs/cacheScope.
usage: python ledger_server.py stdio | http <port> <server_exchanges.jsonl>
Over HTTP an ASGI wrapper appends every response (status, headers, body chunks in base64) to
the JSONL file: the client stops reading an SSE event over its 1 MiB cap, so the full event is
only known from what the server sent."""
import base64, hashlib, sys
from typing import Annotated

import anyio
from pydantic import BaseModel, Field
from mcp.server import MCPServer
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context
from mcp_types import (ElicitRequest, ElicitRequestFormParams, InputRequiredResult, ListToolsResult, PaginatedRequestParams)

PAGE = 3
mcp = MCPServer("ledger-service", version="3.0.1", log_level="WARNING",
                cache_hints={"tools/list": CacheHint(ttl_ms=60000, scope="public")})


class Balance(BaseModel):
    account: str
    balance_cents: int
    currency: str


class RefundDecision(BaseModel):
    order_id: str
    approved: bool
    reason: str | None = None


class RegionRows(BaseModel):
    region: str
    rows: int


def elicit(message, prop, title):
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema={
        "type": "object", "properties": {prop: {"type": "string", "title": title}}, "required": [prop]}))


@mcp.tool()
def get_balance(account: str) -> Balance:
    """Current balance of one account."""
    return Balance(account=account, balance_cents=120450, currency="EUR")


@mcp.tool()
async def approve_refund(order_id: str, amount_cents: int, ctx: Context) -> RefundDecision | InputRequiredResult:
    """Refund an order after the user confirms (and gives a reason)."""
    got = ctx.input_responses or {}
    state = ctx.request_state
    if state is None:
        return InputRequiredResult(input_requests={"confirm": elicit(f"Refund {amount_cents} cents on {order_id}? Type yes to confirm.", "answer", "Confirm")},
                                   request_state=f"refund:{order_id}:step1")
    if state.endswith(":step1"):
        r = got.get("confirm")
        if r is None or getattr(r, "action", None) != "accept":
            return RefundDecision(order_id=order_id, approved=False, reason="declined by the user")
        return InputRequiredResult(input_requests={"reason": elicit("Why is this refund needed?", "reason", "Reason")},
                                   request_state=f"refund:{order_id}:step2")
    r = got.get("reason")
    reason = (r.content or {}).get("reason") if r is not None and getattr(r, "action", None) == "accept" else None
    return RefundDecision(order_id=order_id, approved=True, reason=reason)


@mcp.tool()
async def export_ledger(size_bytes: int, ctx: Context) -> str:
    """Export the ledger as text (reports progress first)."""
    await ctx.report_progress(1, 2, "exporting")
    await anyio.sleep(0.02)
    line = "2026-11-30;ACC-0042;-1250;EUR;refund\n"
    return (line * (size_bytes // len(line) + 1))[:size_bytes]


@mcp.tool()
def query_region(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], sql: str) -> RegionRows:
    """Run a query in one region (the region is routed by the Mcp-Param-Region header)."""
    return RegionRows(region=region, rows=len(sql) % 7 + 1)


@mcp.tool()
def list_accounts(limit: int = 3) -> list[str]:
    """List account ids."""
    return [f"ACC-{i:04d}" for i in range(1, limit + 1)]


def cursor_for(start):
    # opaque: a digest, not a decodable offset
    return base64.urlsafe_b64encode(hashlib.sha256(f"ledger-page-{start}".encode()).digest()[:9]).decode()


_real_list = mcp._handle_list_tools


async def paged_list_tools(ctx, params):
    full = await _real_list(ctx, params)
    tools = full.tools
    starts = {cursor_for(s): s for s in range(0, len(tools), PAGE)}
    start = starts.get(params.cursor, 0) if params is not None and params.cursor else 0
    nxt = start + PAGE
    return ListToolsResult(tools=tools[start:nxt], next_cursor=cursor_for(nxt) if nxt < len(tools) else None)


mcp._lowlevel_server._request_handlers["tools/list"] = mcp._lowlevel_server._request_handlers["tools/list"]._replace(handler=paged_list_tools) \
    if hasattr(mcp._lowlevel_server._request_handlers["tools/list"], "_replace") else \
    type(mcp._lowlevel_server._request_handlers["tools/list"])(PaginatedRequestParams, paged_list_tools)


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        mcp.run("stdio")
    else:
        import json, time
        import uvicorn
        port, log = int(sys.argv[2]), open(sys.argv[3], "a")
        inner = mcp.streamable_http_app()

        async def app(scope, receive, send):
            if scope["type"] != "http":
                return await inner(scope, receive, send)
            rec = {"method": scope["method"], "path": scope["path"], "client_port": scope["client"][1],
                   "req_headers": {k.decode(): v.decode() for k, v in scope["headers"]}, "chunks": []}

            async def tee(msg):
                if msg["type"] == "http.response.start":
                    rec["status"] = msg["status"]
                    rec["res_headers"] = {k.decode(): v.decode() for k, v in msg.get("headers", [])}
                elif msg["type"] == "http.response.body":
                    rec["chunks"].append({"ts_us": time.time_ns() // 1000, "b64": base64.b64encode(msg.get("body", b"")).decode()})
                await send(msg)
            try:
                await inner(scope, receive, tee)
            finally:
                log.write(json.dumps(rec) + "\n")
                log.flush()
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
