"""Python SDK ClientSession over Streamable HTTP, recording every HTTP exchange with an httpx
transport wrapper that tees the response stream (the SDK sees the unchanged bytes).
usage: python http_client.py <base-url> <workdir>"""
import base64, json, os, sys, time

import anyio
import httpx
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

base, work = sys.argv[1], sys.argv[2]
CLIENT = types.Implementation(name="invoice-bot", version="2.1.0")
exchanges, observed, progress, transport_errors = [], [], [], []


def now_us():
    return time.time_ns() // 1000


class RecordingTransport(httpx.AsyncBaseTransport):
    def __init__(self):
        self.inner = httpx.AsyncHTTPTransport()

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

        class Tee(httpx.AsyncByteStream):
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

        return httpx.Response(status_code=resp.status_code, headers=resp.headers, stream=Tee(),
                              extensions=resp.extensions, request=request)


async def on_progress(p, total, message):
    progress.append({"progress": p, "total": total, "message": message})


async def message_handler(m):
    if isinstance(m, Exception):
        transport_errors.append(repr(m)[:300])


async def logging_cb(params):
    observed.append({"label": "log notification", "data": params.data})


async def main():
    client = httpx.AsyncClient(transport=RecordingTransport(), follow_redirects=True, timeout=httpx.Timeout(30, read=300))
    async with client:
        async with streamable_http_client(base + "/mcp", http_client=client) as (r, w, _sid):
            async with ClientSession(r, w, client_info=CLIENT, message_handler=message_handler, logging_callback=logging_cb) as s:
                await s.initialize()

                async def step(label, fn):
                    try:
                        res = await fn()
                        observed.append({"label": label, "outcome": "result", "isError": getattr(res, "isError", None)})
                    except Exception as e:  # noqa
                        observed.append({"label": label, "outcome": "exception", "message": str(e)[:300]})

                await step("tools/list", s.list_tools)
                await step("get_invoice", lambda: s.call_tool("get_invoice", {"invoice_id": "INV-2026-0007"}))
                await step("list_overdue", lambda: s.call_tool("list_overdue", {"limit": 3}))
                await step("build_summary with progress", lambda: s.call_tool("build_summary", {"month": "2026-11"}, progress_callback=on_progress))
        await anyio.sleep(0.3)
    for e in exchanges:
        e.setdefault("res_body_complete", False)
    with open(os.path.join(work, "http_exchanges.json"), "w") as f:
        json.dump({"mode": "py", "base": base, "clientInfo": CLIENT.model_dump(), "exchanges": exchanges}, f)
    with open(os.path.join(work, "observed.json"), "w") as f:
        json.dump({"clientInfo": CLIENT.model_dump(), "steps": observed, "progress_received": progress, "transport_errors": transport_errors}, f, indent=1, default=str)


anyio.run(main)
