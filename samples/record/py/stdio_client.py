"""Python SDK ClientSession driving billing_server.py through tee_shim.py over stdio.
usage: python stdio_client.py <workdir> <tee_shim.py>"""
import json, os, sys, time
from datetime import timedelta

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

work, shim = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
CLIENT = types.Implementation(name="invoice-notebook", version="0.9.2")
observed, transport_errors = [], []


def summ(r):
    if isinstance(r, types.CallToolResult):
        return {"isError": r.isError, "structuredContent": r.structuredContent, "meta": r.meta,
                "content": [{"type": b.type, "bytes": len(b.text.encode())} if b.type == "text" else {"type": b.type} for b in r.content]}
    if isinstance(r, types.ListToolsResult):
        return {"tools": [t.name for t in r.tools], "nextCursor": r.nextCursor}
    return str(r)


async def message_handler(m):
    if isinstance(m, Exception):
        transport_errors.append(f"{type(m).__name__}: {str(m)[:300]}")


async def main():
    params = StdioServerParameters(command=sys.executable, args=[shim, "--out", work, "--", sys.executable, os.path.join(here, "billing_server.py")],
                                   env={"PATH": os.environ["PATH"]})
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w, client_info=CLIENT, message_handler=message_handler) as s:
            await s.initialize()

            async def step(label, coro_fn):
                t0 = time.time()
                try:
                    res = await coro_fn()
                    observed.append({"label": label, "outcome": "result", "ms": round((time.time() - t0) * 1000), "result": summ(res)})
                except Exception as e:  # noqa
                    observed.append({"label": label, "outcome": "exception", "ms": round((time.time() - t0) * 1000),
                                     "class": type(e).__name__, "code": getattr(getattr(e, "error", None), "code", None), "message": str(e)[:500]})

            await step("tools/list", s.list_tools)
            await step("tools/call get_invoice", lambda: s.call_tool("get_invoice", {"invoice_id": "INV-2026-0042"}))
            await step("tools/call export_log 2000 (not cut)", lambda: s.call_tool("export_log", {"size_bytes": 2000}))
            await step("tools/call export_log 20000 (cut)", lambda: s.call_tool("export_log", {"size_bytes": 20000}))
            rid = s._request_id  # id the next request will get
            await step("tools/call slow_export (1.5 s timeout)", lambda: s.call_tool("slow_export", {"year": 2025}, read_timeout_seconds=timedelta(seconds=1.5)))
            # the Python SDK does not cancel on timeout by itself: the driver sends the cancellation
            await s.send_notification(types.ClientNotification(types.CancelledNotification(
                params=types.CancelledNotificationParams(requestId=rid, reason="Request timed out after 1.5 s"))))
            observed.append({"label": "notifications/cancelled sent", "requestId": rid})
            await anyio.sleep(0.5)
            await step("tools/call get_invoice (after the timeout)", lambda: s.call_tool("get_invoice", {"invoice_id": "INV-2026-0043"}))
    with open(os.path.join(work, "observed.json"), "w") as f:
        json.dump({"clientInfo": CLIENT.model_dump(), "steps": observed, "transport_errors": transport_errors}, f, indent=1, default=str)


anyio.run(main)
