// Two TS SDK 2.x Clients (versionNegotiation 'auto') sharing ONE stdio pipe to bistro-bookings,
// through the tee shim. usage: node ts2/stdio_client.mjs <workdir> <tee_shim.py>
//
// The pipe is the SDK's own StdioClientTransport (so its 10,485,760-byte ReadBuffer limit
// applies). Each Client gets a channel of a small multiplexer: request ids are renumbered onto
// one wire counter (two Clients both start at 0; a shared pipe needs unique ids to route the
// answers), `notifications/cancelled.requestId` is renumbered the same way, and answers go back
// to the Client that asked, under its own id. Nothing else of a message is changed.
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { CLIENTS, listOrdersWhileBCalls, runStep, summarize, BIG_OK, BIG_OVER } from './driver_common.mjs';

const [work, shim] = process.argv.slice(2);
const here = path.dirname(new URL(import.meta.url).pathname);
const wire = new StdioClientTransport({
    command: 'python3',
    args: [shim, '--out', work, '--', process.execPath, path.join(here, 'stdio_server.mjs')],
    env: { PATH: process.env.PATH }
});

const idmap = [];            // {wire_id, client, client_id, method}
const routes = new Map();    // wire id -> {chan, id}
const channels = [];
const events = [];
let nextWire = 0;
const ev = (who, kind, detail) => events.push({ t_ms: Date.now(), who, kind, detail });

class Channel {
    constructor(name) { this.name = name; this.byClientId = new Map(); channels.push(this); }
    async start() {}
    async send(msg) {
        let out = msg;
        if ('method' in msg && 'id' in msg) {
            const w = nextWire++;
            routes.set(w, { chan: this, id: msg.id });
            this.byClientId.set(JSON.stringify(msg.id), w);
            idmap.push({ wire_id: w, client: this.name, client_id: msg.id, method: msg.method });
            out = { ...msg, id: w };
        } else if (msg.method === 'notifications/cancelled' && msg.params && 'requestId' in msg.params) {
            const w = this.byClientId.get(JSON.stringify(msg.params.requestId));
            out = { ...msg, params: { ...msg.params, requestId: w ?? msg.params.requestId } };
            ev(this.name, 'cancelled_sent', { client_id: msg.params.requestId, wire_id: w });
        }
        return wire.send(out);
    }
    async close() { this.closed = true; ev(this.name, 'channel_close_called'); }
}

wire.onmessage = msg => {
    if ('id' in msg && !('method' in msg)) {
        const r = routes.get(msg.id);
        if (!r) { ev('mux', 'unroutable', { id: msg.id }); return; }
        routes.delete(msg.id);
        r.chan.onmessage?.({ ...msg, id: r.id });
    } else {
        ev('mux', 'server_message_without_route', { method: msg.method });
    }
};
wire.onerror = e => { ev('stdio-transport', 'onerror', String(e?.message ?? e).slice(0, 300)); for (const c of channels) c.onerror?.(e); };
wire.onclose = () => { ev('stdio-transport', 'onclose'); for (const c of channels) c.onclose?.(); };

await wire.start();
const chA = new Channel(CLIENTS.A.name), chB = new Channel(CLIENTS.B.name);
const opts = { versionNegotiation: { mode: 'auto' } };
const A = new Client(CLIENTS.A, opts), B = new Client(CLIENTS.B, opts);
for (const [c, n] of [[A, CLIENTS.A.name], [B, CLIENTS.B.name]]) {
    c.onerror = e => ev(n, 'client_onerror', String(e?.message ?? e).slice(0, 300));
    c.onclose = () => ev(n, 'client_onclose');
}
const steps = [];
const step = (label, client, fn) => runStep(steps, label, client, fn);

await Promise.all([step('connect (server/discover)', 'A', () => A.connect(chA)), step('connect (server/discover)', 'B', () => B.connect(chB))]);
steps.push({ label: 'negotiated', A: { era: A.getProtocolEra(), version: A.getNegotiatedProtocolVersion(), server: A.getServerVersion() },
             B: { era: B.getProtocolEra(), version: B.getNegotiatedProtocolVersion(), server: B.getServerVersion() } });
// walk 1 and walk 2: each Client's own listTools() (no cursor: the SDK follows nextCursor to the end)
await Promise.all([
    step('listTools() walk', 'A', async () => summarize(await A.listTools())),
    step('listTools() walk', 'B', async () => summarize(await B.listTools()))
]);
// A walks the tool-level paginated list while B makes a few calls
await listOrdersWhileBCalls(A, B, step);
// -32020: the server rejects A's first query_region; the SDK evicts its tools/list cache, re-lists
// from page 1 (walk 3) and resends the call under a new id
await step('query_region (answered -32020, SDK re-lists and retries)', 'A', async () => summarize(await A.callTool({ name: 'query_region', arguments: { region: 'eu-west', day: '2026-11-30' } })));
// timeout: B gives up after 1.5 s
await step('slow_report(4 s) with timeout 1500 ms', 'B', async () => summarize(await B.callTool({ name: 'slow_report', arguments: { seconds: 4 } }, { timeout: 1500 })));
await new Promise(r => setTimeout(r, 3000));     // let the server finish (or abort) the slow call
await step('drop_table', 'B', async () => summarize(await B.callTool({ name: 'drop_table', arguments: { reservation_id: 'R-1042' } })));
// the big result the TS client still reads
await step(`export_receipts ${BIG_OK} wire bytes`, 'A', async () => summarize(await A.callTool({ name: 'export_receipts', arguments: { wire_bytes: BIG_OK } })));
// last: A has a call in flight when B asks for a result over the 10 MiB ReadBuffer limit
const pendingA = step('slow_report(30 s) in flight when the pipe dies', 'A', async () => summarize(await A.callTool({ name: 'slow_report', arguments: { seconds: 30 } })));
await new Promise(r => setTimeout(r, 300));
await step(`export_receipts ${BIG_OVER} wire bytes (over the ReadBuffer limit)`, 'B', async () => summarize(await B.callTool({ name: 'export_receipts', arguments: { wire_bytes: BIG_OVER } })));
await pendingA;
await step('ping_kitchen after the pipe died', 'B', async () => summarize(await B.callTool({ name: 'ping_kitchen', arguments: {} })));
await wire.close().catch(() => {});
await new Promise(r => setTimeout(r, 2500));     // let the shim write shim_events.json
fs.writeFileSync(path.join(work, 'observed.json'), JSON.stringify({ clients: CLIENTS, steps, events, wire_id_map: idmap }, null, 1));
process.exit(0);
