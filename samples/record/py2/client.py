"""`mcp` 2.x `Client` (auto mode: `server/discover` first, `initialize` as the fallback).
usage: python client.py stdio <workdir> <tee_shim.py> <server python> <server.py> [server args...]
       python client.py http <base-url> <workdir>
stdio and http drive ledger_server.py (2026-07-28); `stdio` against a 1.x server shows the
fallback. HTTP exchanges are recorded by an httpx2 transport wrapper that tees every response
body (the SDK sees the unchanged bytes)."""
import base64, json, os, sys, time

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ElicitResult, Implementation

CLIENT = Implementation(name="ledger-cli", version="3.4.0")
# HTTP only: a second identity whose Client shares the first one's httpx2 client (so the same
# keep-alive TCP connection). The SDK stamps its own clientInfo over a caller's `_meta`, so one
# Client cannot speak for two identities.
SUBAGENT = Implementation(name="ledger-subagent", version="0.2.1")
observed, exchanges, transport_errors, elicitations = [], [], [], []


def now_us():
    return time.time_ns() // 1000


class RecordingTransport(httpx2.AsyncBaseTransport):
    def __init__(self):
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request):
        ex = {"ex": len(exchanges), "method": request.method, "url": str(request.url),
              "req_headers": dict(request.headers), "req_body": request.content.decode() if request.content else None,
              "t_req_us": now_us(), "chunks": []}
        exchanges.append(ex)
        try:
            resp = await self.inner.handle_async_request(request)
        except Exception as e:
            ex["fetch_error"] = repr(e)
            ex["status"] = None
            raise
        ex.update(status=resp.status_code, t_res_us=now_us(), res_headers=dict(resp.headers))
        inner = resp.stream

        class Tee(httpx2.AsyncByteStream):
            async def __aiter__(self):
                try:
                    async for c in inner:
                        ex["chunks"].append({"ts_us": now_us(), "b64": base64.b64encode(c).decode()})
                        yield c
                    ex["res_body_complete"] = True
                except BaseException as e:
                    ex["res_body_complete"] = False
                    ex["res_body_error"] = repr(e)
                    raise
                finally:
                    ex["t_end_us"] = now_us()

            async def aclose(self):
                await inner.aclose()

        return httpx2.Response(status_code=resp.status_code, headers=resp.headers, stream=Tee(),
                               extensions=resp.extensions, request=request)


async def on_elicit(ctx, params):
    """The user: confirms ORD-1 and gives a reason; declines ORD-2."""
    msg = params.message
    if "ORD-2" in msg:
        res = ElicitResult(action="decline")
    elif "reason" in json.dumps(params.requested_schema if isinstance(params.requested_schema, dict) else params.requested_schema.model_dump()):
        res = ElicitResult(action="accept", content={"reason": "parcel arrived damaged"})
    else:
        res = ElicitResult(action="accept", content={"answer": "yes"})
    elicitations.append({"message": msg, "action": res.action})
    return res


progress = []


async def on_progress(p, total, message):
    progress.append({"progress": p, "total": total, "message": message})


async def message_handler(m):
    if isinstance(m, Exception):
        transport_errors.append(f"{type(m).__name__}: {str(m)[:300]}")


def summ(r):
    d = {"type": type(r).__name__}
    for k in ("is_error", "structured_content", "next_cursor", "result_type", "ttl_ms", "cache_scope"):
        if hasattr(r, k):
            v = getattr(r, k)
            d[k] = v if len(json.dumps(v, default=str)) < 2000 else f"<{len(json.dumps(v, default=str))} bytes of JSON>"
    if hasattr(r, "tools"):
        d["tools"] = [t.name for t in r.tools]
    if hasattr(r, "content"):
        d["content"] = [{"type": b.type, "bytes": len(b.text.encode())} if b.type == "text" else {"type": b.type} for b in r.content]
    return d


async def step(label, fn):
    t0 = time.time()
    try:
        res = await fn()
        observed.append({"label": label, "outcome": "result", "ms": round((time.time() - t0) * 1000), "result": summ(res)})
    except BaseException as e:  # noqa
        if isinstance(e, anyio.get_cancelled_exc_class()):
            raise
        observed.append({"label": label, "outcome": "exception", "ms": round((time.time() - t0) * 1000), "class": type(e).__name__,
                         "code": getattr(getattr(e, "error", None), "code", getattr(e, "code", None)), "message": str(e)[:500]})


async def drive(c, mode, second=None):
    observed.append({"label": "negotiated", "protocol_version": c.protocol_version,
                     "server_info": c.server_info.model_dump() if c.server_info else None})
    if mode == "fallback":
        await step("tools/list", c.list_tools)
        await step("tools/call get_invoice", lambda: c.call_tool("get_invoice", {"invoice_id": "INV-2026-0042"}))
        return
    await step("tools/list (page 1 only)", c.list_tools)
    await step("tools/call get_balance (ledger-cli)", lambda: c.call_tool("get_balance", {"account": "ACC-0042"}))
    if second is not None:
        async with second() as c2:
            await step("tools/call get_balance (ledger-subagent, same connection)", lambda: c2.call_tool("get_balance", {"account": "ACC-0007"}))
    await step("tools/call approve_refund ORD-1 (accepted: 3 rounds)", lambda: c.call_tool("approve_refund", {"order_id": "ORD-1", "amount_cents": 1250}))
    await step("tools/call approve_refund ORD-2 (declined: 2 rounds)", lambda: c.call_tool("approve_refund", {"order_id": "ORD-2", "amount_cents": 999}))
    await step("tools/call query_region (not on page 1)", lambda: c.call_tool("query_region", {"region": "eu-west-1", "sql": "SELECT 1"}))
    await step("tools/call query_region (non-ASCII value: base64 header)", lambda: c.call_tool("query_region", {"region": "zürich-nord", "sql": "SELECT 2"}))
    big = 530_000 if mode == "http" else 2_000   # HTTP: progress first, so SSE; the result event (text + structuredContent) is > 1 MiB
    await step(f"tools/call export_ledger {big} (with progress)", lambda: c.call_tool("export_ledger", {"size_bytes": big}, progress_callback=on_progress))
    await step("tools/call list_accounts", lambda: c.call_tool("list_accounts", {"limit": 2}))


async def main():
    mode = sys.argv[1]
    if mode in ("stdio", "fallback"):
        work, shim, spy, script = sys.argv[2:6]
        params = StdioServerParameters(command=sys.executable, args=[shim, "--out", work, "--", spy, script, *sys.argv[6:]],
                                       env={"PATH": os.environ["PATH"]})
        async with Client(params, client_info=CLIENT, elicitation_callback=on_elicit, message_handler=message_handler) as c:
            await drive(c, mode)
    else:
        base, work = sys.argv[2], sys.argv[3]
        http = httpx2.AsyncClient(transport=RecordingTransport(), timeout=httpx2.Timeout(30, read=60))
        async with http:
            def second():
                return Client(streamable_http_client(base + "/mcp", http_client=http), client_info=SUBAGENT, message_handler=message_handler)
            async with Client(streamable_http_client(base + "/mcp", http_client=http), client_info=CLIENT,
                              elicitation_callback=on_elicit, message_handler=message_handler) as c:
                await drive(c, mode, second)
            await anyio.sleep(0.3)
        for e in exchanges:
            e.setdefault("res_body_complete", False)
        with open(os.path.join(work, "http_exchanges.json"), "w") as f:
            json.dump({"mode": "py2", "base": base, "clientInfo": CLIENT.model_dump(), "exchanges": exchanges}, f)
    with open(os.path.join(work, "observed.json"), "w") as f:
        json.dump({"clientInfo": CLIENT.model_dump(), "second_clientInfo": SUBAGENT.model_dump(), "steps": observed, "elicitations": elicitations, "progress_received": progress,
                   "transport_errors": transport_errors}, f, indent=1, default=str)


anyio.run(main)
