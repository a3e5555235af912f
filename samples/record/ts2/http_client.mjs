// Two TS SDK 2.x Clients (versionNegotiation 'auto') over Streamable HTTP, both through Node's
// global fetch, so they share its keep-alive connection pool; their steps run concurrently.
// usage: node ts2/http_client.mjs <base-url> <workdir>
// Each Client's fetch is a recording wrapper around globalThis.fetch (same pool): it logs the
// request and tees the response body chunk by chunk (the SDK reads the unchanged bytes).
import fs from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { CLIENTS, listOrdersWhileBCalls, runStep, summarize } from './driver_common.mjs';

const [base, work] = process.argv.slice(2);
const exchanges = [];
const nowUs = () => Math.round((performance.timeOrigin + performance.now()) * 1000);

function recordingFetch(who) {
    return async (input, init = {}) => {
        const req = new Request(input, init);
        const body = init.body == null ? null : typeof init.body === 'string' ? init.body : await req.clone().text();
        const ex = { ex: exchanges.length, who, method: req.method, url: req.url, req_headers: Object.fromEntries(req.headers),
                     req_body: body, t_req_us: nowUs(), chunks: [] };
        exchanges.push(ex);
        let resp;
        try {
            resp = await globalThis.fetch(input, init);
        } catch (e) {
            ex.status = null; ex.fetch_error = `${e?.name}: ${e?.message}${e?.cause ? ' (' + (e.cause.code ?? e.cause.message) + ')' : ''}`;
            throw e;
        }
        ex.status = resp.status; ex.t_res_us = nowUs(); ex.res_headers = Object.fromEntries(resp.headers);
        if (!resp.body) { ex.res_body_complete = true; return resp; }
        const reader = resp.body.getReader();
        const stream = new ReadableStream({
            async pull(ctrl) {
                try {
                    const { value, done } = await reader.read();
                    if (done) { ex.res_body_complete = true; ex.t_end_us = nowUs(); ctrl.close(); return; }
                    ex.chunks.push({ ts_us: nowUs(), b64: Buffer.from(value).toString('base64') });
                    ctrl.enqueue(value);
                } catch (e) {
                    ex.res_body_complete = false; ex.t_end_us = nowUs();
                    ex.res_body_error = `${e?.name}: ${e?.message}${e?.cause ? ' (' + (e.cause.code ?? e.cause.message) + ')' : ''}`;
                    ctrl.error(e);
                }
            },
            cancel(reason) { ex.res_body_cancelled = String(reason ?? 'cancelled'); ex.t_end_us = nowUs(); return reader.cancel(reason); }
        });
        return new Response(stream, { status: resp.status, statusText: resp.statusText, headers: resp.headers });
    };
}

const mk = who => new Client(CLIENTS[who], { versionNegotiation: { mode: 'auto' } });
const A = mk('A'), B = mk('B');
const events = [];
for (const [c, n] of [[A, 'A'], [B, 'B']]) {
    c.onerror = e => events.push({ t_ms: Date.now(), who: n, kind: 'client_onerror', detail: String(e?.message ?? e).slice(0, 300) });
}
const tA = new StreamableHTTPClientTransport(new URL(base + '/mcp'), { fetch: recordingFetch('A') });
const tB = new StreamableHTTPClientTransport(new URL(base + '/mcp'), { fetch: recordingFetch('B') });
const steps = [];
const step = (label, client, fn) => runStep(steps, label, client, fn);
const progress = [];

await Promise.all([step('connect (server/discover)', 'A', () => A.connect(tA)), step('connect (server/discover)', 'B', () => B.connect(tB))]);
steps.push({ label: 'negotiated', A: { era: A.getProtocolEra(), version: A.getNegotiatedProtocolVersion(), server: A.getServerVersion() },
             B: { era: B.getProtocolEra(), version: B.getNegotiatedProtocolVersion(), server: B.getServerVersion() } });
// walk 1 (A lists without writing its response cache: a tool picker that always shows fresh data)
// and walk 2 (B, default), concurrently on the shared pool
await Promise.all([
    step("listTools(undefined, {cacheMode:'bypass'}) walk", 'A', async () => summarize(await A.listTools(undefined, { cacheMode: 'bypass' }))),
    step('listTools() walk', 'B', async () => summarize(await B.listTools()))
]);
await listOrdersWhileBCalls(A, B, step);
// A has no cached tools/list (bypass): no Mcp-Param-Region header -> HTTP 400 -32020 -> the SDK
// evicts, re-lists from page 1 (walk 3) and resends with the header, under a new id
await step('query_region (no cached schema: -32020, SDK re-lists and retries)', 'A', async () => summarize(await A.callTool({ name: 'query_region', arguments: { region: 'eu-west', day: '2026-11-30' } })));
// timeout (B) while A calls ping_kitchen on the same pool
await Promise.all([
    step('slow_report(4 s) with timeout 1500 ms', 'B', async () => summarize(await B.callTool({ name: 'slow_report', arguments: { seconds: 4 } }, { timeout: 1500 }))),
    step('ping_kitchen', 'A', async () => summarize(await A.callTool({ name: 'ping_kitchen', arguments: {} })))
]);
await new Promise(r => setTimeout(r, 3000));
// broken stream: the server destroys the TCP connection after the progress event
// (timeout 5 s: with the default 60 s the call would just hang that long, see NOTES.md)
const flaky = await step('flaky_report (response stream broken after the progress event; timeout 5000 ms)', 'A', async () => summarize(
    await A.callTool({ name: 'flaky_report', arguments: { day: '2026-11-30' } }, { onprogress: p => progress.push(p), timeout: 5000 })));
if (flaky.outcome === 'exception') {
    // the SDK did not re-issue it: the driver does, as 2026-07-28 asks (same method and params, new id)
    await step('flaky_report re-issued by the driver after the broken stream', 'A', async () => summarize(
        await A.callTool({ name: 'flaky_report', arguments: { day: '2026-11-30' } }, { onprogress: p => progress.push(p) })));
}
await step('drop_table', 'B', async () => summarize(await B.callTool({ name: 'drop_table', arguments: { reservation_id: 'R-1042' } })));
await Promise.all([A.close(), B.close()]).catch(() => {});
await new Promise(r => setTimeout(r, 300));
for (const e of exchanges) e.res_body_complete ??= false;
fs.writeFileSync(path.join(work, 'http_exchanges.json'), JSON.stringify({ mode: 'ts2', base, clients: CLIENTS, exchanges }));
fs.writeFileSync(path.join(work, 'observed.json'), JSON.stringify({ clients: CLIENTS, steps, events, progress_received: progress }, null, 1));
process.exit(0);
