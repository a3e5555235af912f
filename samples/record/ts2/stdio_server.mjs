// stdio entry of bistro-bookings (serveStdio, 2026-07-28). usage: node stdio_server.mjs
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { makeServer, padToWireSize } from './bistro_server.mjs';

const state = {};
const transport = new StdioServerTransport();
const send = transport.send.bind(transport);
transport.send = (message, options) => {
    try { padToWireSize(message); } catch (e) { process.stderr.write(`[bistro] ${e.message}\n`); }
    return send(message, options);
};
serveStdio(() => makeServer({ transport: 'stdio', state }), {
    transport,
    onerror: e => process.stderr.write(`[bistro] onerror: ${e?.message ?? e}\n`)
});
process.stdin.on('end', () => {
    process.stderr.write(`[bistro] stdin closed; state ${JSON.stringify(state)}\n`);
    setTimeout(() => process.exit(0), 20);
});
process.stderr.write('[bistro] serving stdio\n');
