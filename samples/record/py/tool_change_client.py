"""Python SDK ClientSession driving inventory_server.py 1.4.0, then 1.5.0, each through tee_shim.py
over stdio (two real sessions, one after the other, as a host does when the server is upgraded).
usage: python tool_change_client.py <workdir> <tee_shim.py>   -> <workdir>/v1, <workdir>/v2"""
import json, os, sys, time

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

work, shim = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
CLIENT = types.Implementation(name="claude-ai", version="0.1.0")   # what Claude Desktop sends
RUNS = [("v1", "1.4.0", {"sku": "SKU-1001", "quantity": 5}),
        ("v2", "1.5.0", {"sku": "SKU-1001", "quantity": "5", "reason": "cycle count"})]


def summ(r):
    if isinstance(r, types.CallToolResult):
        return {"isError": r.isError, "structuredContent": r.structuredContent,
                "content": [b.text if b.type == "text" else {"type": b.type} for b in r.content]}
    if isinstance(r, types.ListToolsResult):
        return {"tools": [t.name for t in r.tools], "nextCursor": r.nextCursor}
    return str(r)


async def session(label, version, adjust_args):
    out = os.path.join(work, label)
    observed, transport_errors = [], []

    async def message_handler(m):
        if isinstance(m, Exception):
            transport_errors.append(f"{type(m).__name__}: {str(m)[:300]}")

    params = StdioServerParameters(command=sys.executable, env={"PATH": os.environ["PATH"]},
                                   args=[shim, "--out", out, "--", sys.executable, os.path.join(here, "inventory_server.py"), version])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w, client_info=CLIENT, message_handler=message_handler) as s:
            init = await s.initialize()
            observed.append({"label": "initialize", "serverInfo": init.serverInfo.model_dump(exclude_none=True),
                             "protocolVersion": init.protocolVersion})

            async def step(lbl, fn):
                t0 = time.time()
                try:
                    res = await fn()
                    observed.append({"label": lbl, "outcome": "result", "ms": round((time.time() - t0) * 1000), "result": summ(res)})
                except Exception as e:  # noqa
                    observed.append({"label": lbl, "outcome": "exception", "class": type(e).__name__, "message": str(e)[:500]})

            await step("tools/list", s.list_tools)
            await step("tools/call ping", lambda: s.call_tool("ping", {}))
            await step("tools/call get_item", lambda: s.call_tool("get_item", {"sku": "SKU-1001"}))
            await step("tools/call adjust_stock", lambda: s.call_tool("adjust_stock", adjust_args))
    with open(os.path.join(out, "observed.json"), "w") as f:
        json.dump({"clientInfo": CLIENT.model_dump(), "server_version_started": version, "steps": observed,
                   "transport_errors": transport_errors}, f, indent=1, default=str)


async def main():
    for label, version, adjust_args in RUNS:
        await session(label, version, adjust_args)
        await anyio.sleep(1.0)   # the host restarts the server after the upgrade


anyio.run(main)
