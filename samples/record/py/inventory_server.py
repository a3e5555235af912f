"""Low-level `mcp` 1.30.0 Server `inventory-server` in two releases, over stdio.
usage: python inventory_server.py <1.4.0|1.5.0>

The tool definitions are given as explicit JSON Schemas (no FastMCP introspection) so that the
two releases differ in exactly the planned ways (see lib/tool_change.py PLANNED):
  adjust_stock  quantity integer -> string, new required `reason`
  search_items  description 37 characters longer
  get_item      outputSchema gains `warehouse`
  delete_item   annotations.destructiveHint false -> true
  legacy_export 1.4.0 only;  bulk_import 1.5.0 only;  ping unchanged
"""
import sys

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

VERSION = sys.argv[1]
assert VERSION in ("1.4.0", "1.5.0"), VERSION
V2 = VERSION == "1.5.0"
SEARCH_DESC = "Search inventory items by name or SKU substring."
SEARCH_DESC_V2 = SEARCH_DESC + " Sorted by stock quantity, top first."   # +37 characters

ITEMS = {"SKU-1001": {"sku": "SKU-1001", "name": "M6 hex bolt (box of 100)", "quantity": 240},
         "SKU-2040": {"sku": "SKU-2040", "name": "Cable tie 200 mm", "quantity": 1800}}


def tools():
    item_out = {"type": "object",
                "properties": {"sku": {"type": "string"}, "name": {"type": "string"}, "quantity": {"type": "integer"}},
                "required": ["sku", "name", "quantity"]}
    if V2:
        item_out["properties"]["warehouse"] = {"type": "string"}
    adjust_in = {"type": "object",
                 "properties": {"sku": {"type": "string"}, "quantity": {"type": "string" if V2 else "integer"}},
                 "required": ["sku", "quantity"]}
    if V2:
        adjust_in["properties"]["reason"] = {"type": "string"}
        adjust_in["required"].append("reason")
    sku_in = {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}
    out = [
        types.Tool(name="ping", description="Health check; answers pong.", inputSchema={"type": "object", "properties": {}},
                   annotations=types.ToolAnnotations(readOnlyHint=True)),
        types.Tool(name="get_item", description="Get one inventory item by SKU.", inputSchema=sku_in, outputSchema=item_out,
                   annotations=types.ToolAnnotations(readOnlyHint=True)),
        types.Tool(name="search_items", description=SEARCH_DESC_V2 if V2 else SEARCH_DESC,
                   inputSchema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
                   annotations=types.ToolAnnotations(readOnlyHint=True)),
        types.Tool(name="adjust_stock", description="Add to or remove from the stock of an item.", inputSchema=adjust_in),
        types.Tool(name="delete_item", description="Delete an item from the catalogue.", inputSchema=sku_in,
                   annotations=types.ToolAnnotations(destructiveHint=V2, idempotentHint=True)),
    ]
    if V2:
        out.append(types.Tool(name="bulk_import", description="Import items from a CSV text.",
                              inputSchema={"type": "object", "properties": {"csv": {"type": "string"}}, "required": ["csv"]}))
    else:
        out.append(types.Tool(name="legacy_export", description="Export the catalogue as CSV (deprecated).",
                              inputSchema={"type": "object", "properties": {}}))
    return out


server = Server("inventory-server", version=VERSION)


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return tools()


@server.call_tool()
async def call_tool(name: str, args: dict):
    if name == "ping":
        return [types.TextContent(type="text", text="pong")]
    if name == "get_item":
        item = dict(ITEMS[args["sku"]])
        if V2:
            item["warehouse"] = "BER-2"
        return item  # dict -> structuredContent + its JSON as text
    if name == "adjust_stock":
        q = int(args["quantity"])
        ITEMS[args["sku"]]["quantity"] += q
        why = f" ({args['reason']})" if V2 else ""
        return [types.TextContent(type="text", text=f"{args['sku']}: {q:+d}{why} -> {ITEMS[args['sku']]['quantity']}")]
    return [types.TextContent(type="text", text=f"{name}: not used in this recording")]


async def main():
    async with stdio_server() as (r, w):
        await server.run(r, w, server.create_initialization_options())


anyio.run(main)
