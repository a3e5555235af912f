"""invoice-service: FastMCP over Streamable HTTP (stateful, SSE responses) on 127.0.0.1:<port>/mcp.
usage: python http_server.py <port>"""
import sys

import anyio
from pydantic import BaseModel
from mcp.server.fastmcp import Context, FastMCP

mcp = FastMCP("invoice-service", host="127.0.0.1", port=int(sys.argv[1]), log_level="WARNING")


class Invoice(BaseModel):
    invoice_id: str
    amount_cents: int
    currency: str


@mcp.tool()
def get_invoice(invoice_id: str) -> Invoice:
    """Look up one invoice."""
    return Invoice(invoice_id=invoice_id, amount_cents=4500, currency="USD")


@mcp.tool()
def list_overdue(limit: int = 3) -> list[str]:
    """List overdue invoice ids."""
    return [f"INV-2026-{i:04d}" for i in range(1, limit + 1)]


@mcp.tool()
async def build_summary(month: str, ctx: Context) -> str:
    """Build a monthly summary, reporting progress."""
    for i in range(1, 4):
        await ctx.report_progress(i, 3, f"step {i}/3")
        await anyio.sleep(0.02)
    await ctx.info(f"summary for {month} built")
    return f"summary {month}: 42 invoices, 3 overdue"


if __name__ == "__main__":
    mcp.run("streamable-http")
