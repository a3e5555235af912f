// Streamable HTTP entry of bistro-bookings (createMcpHandler + toNodeHandler, 2026-07-28).
// usage: node ts2/http_server.mjs <port> <server_exchanges.jsonl>
// Every exchange is appended to the JSONL file as the server saw it: client port (the TCP
// connection), request headers and body, status, response headers and body chunks (base64).
// flaky_report: the first call's response stream is broken by destroying its TCP connection
// after the progress event (the request carries `Mcp-Name: flaky_report`).
import fs from 'node:fs';
import http from 'node:http';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { makeServer } from './bistro_server.mjs';

const [port, logPath] = [Number(process.argv[2]), process.argv[3]];
const log = fs.openSync(logPath, 'a');
const state = {};
let flakyRes = null;
const errors = [];
const handler = createMcpHandler(() => makeServer({
    transport: 'http', state,
    breakStream: () => { state.broken_streams = (state.broken_streams ?? 0) + 1; flakyRes?.socket?.destroy(); }
}), { legacy: 'reject', onerror: e => errors.push(String(e?.message ?? e)) });
const node = toNodeHandler(handler);
const now = () => Number(process.hrtime.bigint() / 1000n) + T0;
const T0 = Date.now() * 1000 - Number(process.hrtime.bigint() / 1000n);

const server = http.createServer((req, res) => {
    const rec = { t_req_us: now(), method: req.method, path: req.url, client_port: req.socket.remotePort,
                  req_headers: { ...req.headers }, req_chunks: [], chunks: [] };
    req.on('data', c => rec.req_chunks.push(Buffer.from(c).toString('base64')));
    if (req.headers['mcp-name'] === 'flaky_report') flakyRes = res;
    const writeHead = res.writeHead.bind(res), write = res.write.bind(res), end = res.end.bind(res);
    res.writeHead = (status, ...rest) => {
        rec.status = status;
        const h = rest.find(x => x && typeof x === 'object');
        if (h) rec.res_headers_arg = Array.isArray(h) ? Object.fromEntries(h) : { ...h };
        return writeHead(status, ...rest);
    };
    const keep = c => { if (c != null && c.length) rec.chunks.push({ ts_us: now(), b64: Buffer.from(c).toString('base64') }); };
    res.write = (c, ...rest) => { keep(typeof c === 'string' ? Buffer.from(c) : c); return write(c, ...rest); };
    res.end = (c, ...rest) => { if (c && typeof c !== 'function') keep(typeof c === 'string' ? Buffer.from(c) : c); return end(c, ...rest); };
    res.on('close', () => {
        rec.t_end_us = now();
        rec.status ??= res.statusCode;
        rec.res_headers = { ...res.getHeaders(), ...(rec.res_headers_arg ?? {}) };
        delete rec.res_headers_arg;
        rec.finished = res.writableFinished;
        rec.req_body = Buffer.concat(rec.req_chunks.map(b => Buffer.from(b, 'base64'))).toString('utf8');
        delete rec.req_chunks;
        fs.writeSync(log, JSON.stringify(rec) + '\n');
    });
    node(req, res);
});
server.keepAliveTimeout = 30000;
server.listen(port, '127.0.0.1', () => process.stderr.write(`[bistro] http on 127.0.0.1:${port}\n`));
process.on('SIGTERM', () => {
    process.stderr.write(`[bistro] state ${JSON.stringify(state)} errors ${JSON.stringify(errors)}\n`);
    server.close(); server.closeAllConnections?.();
    setTimeout(() => process.exit(0), 100);
});
