"""billing-exporter: Python SDK FastMCP server over stdio, with a stdout banner (pollution),
a truncating tool and a tool that never answers in time."""
import sys

import anyio
from pydantic import BaseModel
from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult, TextContent

MARKER = "[Response truncated due to size limit]"
CAP = 4096  # bytes of text kept by export_log

mcp = FastMCP("billing-exporter")


class Invoice(BaseModel):
    invoice_id: str
    amount_cents: int
    currency: str


@mcp.tool()
def get_invoice(invoice_id: str) -> Invoice:
    """Look up one invoice."""
    return Invoice(invoice_id=invoice_id, amount_cents=129900, currency="EUR")


def log_text(size: int) -> str:
    line = "2026-11-30T10:15:02Z INFO billing.export batch=42 rows=1000 status=ok\n"
    return (line * (size // len(line) + 1))[:size]


@mcp.tool()
def export_log(size_bytes: int) -> CallToolResult:
    """Export the billing log; cut to 4096 bytes."""
    text = log_text(size_bytes)
    raw = text.encode()
    if len(raw) <= CAP:
        return CallToolResult(content=[TextContent(type="text", text=text)])
    kept = raw[:CAP].decode("utf-8", errors="ignore")
    return CallToolResult(
        content=[TextContent(type="text", text=kept + "\n" + MARKER)],
        _meta={"truncated": True, "original_bytes": len(raw), "returned_bytes": len(kept.encode())},
    )


@mcp.tool()
async def slow_export(year: int) -> str:
    """Export a whole year (slow)."""
    await anyio.sleep(30)
    return f"exported {year}"


if __name__ == "__main__":
    # stdout pollution: a banner printed before the stdio transport starts
    print("billing-exporter 0.4.0: starting MCP server on stdio (log level INFO)", flush=True)
    mcp.run("stdio")
