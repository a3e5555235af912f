"""receipts-archive: a FastMCP server from `mcp` 1.x (handshake era only), over stdio. The 2.x
client's `server/discover` probe gets an error here and falls back to `initialize`.
usage: python legacy_server.py"""
from pydantic import BaseModel
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("receipts-archive", log_level="WARNING")


class Receipt(BaseModel):
    invoice_id: str
    total_cents: int


@mcp.tool()
def get_invoice(invoice_id: str) -> Receipt:
    """Look up one archived receipt."""
    return Receipt(invoice_id=invoice_id, total_cents=9900)


if __name__ == "__main__":
    mcp.run("stdio")
