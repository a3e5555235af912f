// Shared by the stdio and HTTP drivers: the two client identities, the big sizes, step logging.
export const CLIENTS = {
    A: { name: 'bistro-frontdesk', version: '5.2.0' },
    B: { name: 'bistro-kitchen-agent', version: '0.9.1' }
};
export const BIG_OK = 10_381_095;       // under the TS client's 10,485,760-byte stdio ReadBuffer limit
export const BIG_OVER = 11_534_336;     // 11 MiB: over it

export function summarize(r) {
    if (!r || typeof r !== 'object') return r;
    const d = {};
    if (Array.isArray(r.tools)) d.tools = r.tools.map(t => t.name);
    if ('nextCursor' in r) d.nextCursor = r.nextCursor;
    if (Array.isArray(r.content)) d.content = r.content.map(b => b.type === 'text' ? { type: 'text', bytes: Buffer.byteLength(b.text), head: b.text.slice(0, 80) } : { type: b.type });
    if (r.isError !== undefined) d.isError = r.isError;
    if (r.structuredContent !== undefined) {
        const s = JSON.stringify(r.structuredContent);
        d.structuredContent = s.length < 600 ? r.structuredContent : `<${s.length} bytes of JSON>`;
    }
    if (r.resultType !== undefined) d.resultType = r.resultType;
    return d;
}

export async function runStep(steps, label, client, fn) {
    const t0 = Date.now();
    const row = { label, client, t_start_ms: t0 };
    steps.push(row);
    try {
        row.result = await fn();
        row.outcome = 'result';
    } catch (e) {
        row.outcome = 'exception';
        row.class = e?.constructor?.name;
        row.code = e?.code;
        row.message = String(e?.message ?? e).slice(0, 500);
        if (e?.cause) row.cause = String(e.cause?.message ?? e.cause).slice(0, 300);
    }
    row.ms = Date.now() - t0;
    return row;
}

// A walks the tool-level paginated list while B makes a few calls (both drivers, same steps).
export function listOrdersWhileBCalls(A, B, step) {
    return Promise.all([
        step('list_orders walk (tool-level cursor)', 'A', async () => {
            const pages = [];
            let cursor;
            do {
                const r = await A.callTool({ name: 'list_orders', arguments: cursor ? { cursor } : {} });
                pages.push({ cursor_in: cursor ?? null, items: r.structuredContent.items.length, next: r.structuredContent.nextCursor ?? null });
                cursor = r.structuredContent.nextCursor;
            } while (cursor);
            return { pages };
        }),
        (async () => {
            await step('search_menu', 'B', async () => summarize(await B.callTool({ name: 'search_menu', arguments: { q: 'risotto' } })));
            await step('get_reservation', 'B', async () => summarize(await B.callTool({ name: 'get_reservation', arguments: { reservation_id: 'R-1042' } })));
            await step('book_table', 'B', async () => summarize(await B.callTool({ name: 'book_table', arguments: { party: 4, time: '19:30' } })));
        })()
    ]);
}
