// bistro-bookings: a TS SDK 2.x `McpServer` (@modelcontextprotocol/server) serving 2026-07-28.
// Shared by the stdio entry (serveStdio) and the Streamable HTTP entry (createMcpHandler).
//
// Seeded behaviour (the tool bodies and these two handlers are hand-written; every JSON-RPC
// message is still produced by the SDK):
//  - tools/list is paged with opaque cursors `tl.` + base64url(JSON). Page 1 returns 5 tools but
//    its nextCursor advances only 3, so page 2 starts again at `book_table`, `drop_table`.
//  - list_orders is a tool-level paginated list: 40 items a page, its nextCursor advances 30, so
//    each later page repeats 10 items (160 items, 5 pages, 40 repeats).
//  - stdio only: the first `query_region` call is answered with -32020 (HeaderMismatch); over HTTP
//    the SDK's own header validation answers -32020 when the Mcp-Param-Region header is missing.
//  - export_receipts pads its text so that the response line is exactly `wire_bytes` bytes: the
//    final padding is set when the message is sent (the SDK adds the id and the `_meta` envelope).
import { McpServer, ProtocolError, fromJsonSchema } from '@modelcontextprotocol/server';
import * as z from 'zod';

export const SERVER_INFO = { name: 'bistro-bookings', version: '2.6.0' };
export const PAGE_ADVANCE = { 0: 3 };          // page start -> how far its nextCursor advances (default: the page length)
export const TOOL_PAGE = 5;
export const ORDERS = 160, ORDER_PAGE = 40, ORDER_ADVANCE = 30;

const b64u = s => Buffer.from(s, 'utf8').toString('base64url');
const unb64u = s => Buffer.from(s, 'base64url').toString('utf8');
export const toolsCursor = at => 'tl.' + b64u(JSON.stringify({ at, gen: '2026-11-30' }));
export const ordersCursor = at => 'ord.' + b64u(JSON.stringify({ after: at, v: 2 }));
const parseCursor = (c, prefix) => {
    if (typeof c !== 'string' || !c.startsWith(prefix)) return null;
    try { return JSON.parse(unb64u(c.slice(prefix.length))); } catch { return null; }
};

const sleep = (ms, signal) => new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); reject(new Error('aborted')); }, { once: true });
});

export function orderItem(i) {
    return { id: `ord-${String(i + 1).padStart(4, '0')}`, table: 1 + (i * 7) % 24, total_cents: 1800 + (i * 137) % 9000 };
}

/** Build one McpServer. opts.transport: 'stdio' | 'http'; opts.hooks: shared mutable state. */
export function makeServer(opts) {
    const state = opts.state;
    const mcp = new McpServer(SERVER_INFO, {
        capabilities: { tools: {} },
        cacheHints: { 'tools/list': { ttlMs: 60000, cacheScope: 'public' } }
    });
    const text = t => ({ content: [{ type: 'text', text: t }] });

    mcp.registerTool('search_menu', {
        description: 'Search the menu.',
        inputSchema: z.object({ q: z.string() })
    }, async ({ q }) => text(`3 dishes match "${q}"`));

    mcp.registerTool('get_reservation', {
        description: 'One reservation.',
        inputSchema: z.object({ reservation_id: z.string() }),
        outputSchema: z.object({ reservation_id: z.string(), party: z.number(), time: z.string() })
    }, async ({ reservation_id }) => {
        const sc = { reservation_id, party: 4, time: '19:30' };
        return { ...text(JSON.stringify(sc)), structuredContent: sc };
    });

    mcp.registerTool('list_orders', {
        description: 'Orders of the day, paged: pass the previous page\'s nextCursor as cursor.',
        inputSchema: z.object({ cursor: z.string().optional() }),
        outputSchema: z.object({
            items: z.array(z.object({ id: z.string(), table: z.number(), total_cents: z.number() })),
            nextCursor: z.string().optional()
        })
    }, async ({ cursor }) => {
        const at = cursor ? (parseCursor(cursor, 'ord.')?.after ?? 0) : 0;
        const items = [];
        for (let i = at; i < Math.min(at + ORDER_PAGE, ORDERS); i++) items.push(orderItem(i));
        const sc = { items };
        if (at + ORDER_PAGE < ORDERS) sc.nextCursor = ordersCursor(at + ORDER_ADVANCE);
        return { ...text(`${items.length} orders (${items[0].id} .. ${items.at(-1).id})`), structuredContent: sc };
    });

    mcp.registerTool('book_table', {
        description: 'Book a table.',
        inputSchema: z.object({ party: z.number(), time: z.string() })
    }, async ({ party, time }) => text(`booked a table for ${party} at ${time}`));

    mcp.registerTool('drop_table', {
        description: 'Cancel a booking.',
        inputSchema: z.object({ reservation_id: z.string() })
    }, async ({ reservation_id }) => text(`dropped ${reservation_id}`));

    mcp.registerTool('query_region', {
        description: 'Covers per region (the region is routed by the Mcp-Param-Region header).',
        inputSchema: fromJsonSchema({
            type: 'object',
            properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, day: { type: 'string' } },
            required: ['region', 'day']
        })
    }, async ({ region, day }) => text(`region=${region} day=${day} covers=212`));

    mcp.registerTool('slow_report', {
        description: 'A slow end-of-day report.',
        inputSchema: z.object({ seconds: z.number() })
    }, async ({ seconds }, ctx) => {
        state.slow_started = (state.slow_started ?? 0) + 1;
        try {
            await sleep(seconds * 1000, ctx.mcpReq.signal);
        } catch {
            state.slow_aborted = (state.slow_aborted ?? 0) + 1;
            throw new Error('report aborted');
        }
        return text(`report ready after ${seconds}s`);
    });

    mcp.registerTool('export_receipts', {
        description: 'Export receipts as one text block of (about) wire_bytes bytes on the wire.',
        inputSchema: z.object({ wire_bytes: z.number() })
    }, async ({ wire_bytes }) => {
        const line = '2026-11-30;T12;RCPT-0000;4 covers;EUR 128.40;paid\n';
        const head = `receipts export, sized to ${wire_bytes} wire bytes\n`;
        const body = line.repeat(Math.ceil(wire_bytes / line.length));
        // each '\n' is two bytes in JSON: leave room, padToWireSize fills up to the exact size
        const room = Math.floor((wire_bytes - head.length - 600) * line.length / (line.length + 1));
        return text(head + body.slice(0, Math.max(0, room)));
    });

    mcp.registerTool('flaky_report', {
        description: 'A report streamed with progress (HTTP: the first response stream breaks).',
        inputSchema: z.object({ day: z.string() })
    }, async ({ day }, ctx) => {
        const n = state.flaky_calls = (state.flaky_calls ?? 0) + 1;
        const token = ctx.mcpReq._meta?.progressToken;
        if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2, message: 'collecting' } });
        if (n === 1 && opts.breakStream) {
            await sleep(150);
            opts.breakStream(ctx);       // destroys the TCP connection under this response stream
            await sleep(200);
            return text('never delivered');
        }
        await sleep(50);
        return text(`report for ${day}: 212 covers`);
    });

    mcp.registerTool('ping_kitchen', {
        description: 'Is the kitchen open?',
        inputSchema: z.object({})
    }, async () => text('kitchen open'));

    // ---- tools/list: paged with opaque cursors, page 1 advancing only 3 of its 5 tools ----
    const handlers = mcp.server._requestHandlers;
    const listAll = handlers.get('tools/list');
    if (!listAll) throw new Error('no tools/list handler');
    handlers.set('tools/list', async (request, ctx) => {
        const full = await listAll(request, ctx);        // the SDK's own listing (+ its cache hint)
        const cursor = request.params?.cursor;
        let at = 0;
        if (cursor !== undefined) {
            const c = parseCursor(cursor, 'tl.');
            if (!c || typeof c.at !== 'number') throw new ProtocolError(-32602, 'Invalid cursor');
            at = c.at;
        }
        const tools = full.tools;
        const page = tools.slice(at, at + TOOL_PAGE);
        const adv = PAGE_ADVANCE[at] ?? page.length;
        full.tools = page;
        if (at + adv < tools.length) full.nextCursor = toolsCursor(at + adv);
        return full;
    });

    // ---- stdio: the first query_region is answered -32020 (there are no headers on stdio) ----
    if (opts.transport === 'stdio') {
        const call = handlers.get('tools/call');
        handlers.set('tools/call', async (request, ctx) => {
            if (request.params?.name === 'query_region' && !state.rejected_query_region) {
                state.rejected_query_region = true;
                throw new ProtocolError(-32020, "Header mismatch: Mcp-Param-Region header is missing but the request body's 'region' argument is present");
            }
            return call(request, ctx);
        });
    }
    return mcp;
}

/** Set the padding of an export_receipts result so that JSON.stringify(message) is exactly N bytes. */
export function padToWireSize(message) {
    const t = message?.result?.content?.[0];
    if (!t || t.type !== 'text' || typeof t.text !== 'string') return;
    const m = /^receipts export, sized to (\d+) wire bytes\n/.exec(t.text);
    if (!m) return;
    const want = Number(m[1]);
    const have = Buffer.byteLength(JSON.stringify(message));
    const delta = want - have - 'end of export; padding '.length;
    if (delta < 0) throw new Error(`export_receipts: ${have} bytes before padding, over ${want}`);
    t.text += 'end of export; padding ' + '#'.repeat(delta);
    if (Buffer.byteLength(JSON.stringify(message)) !== want) throw new Error('export_receipts: padding failed');
}
