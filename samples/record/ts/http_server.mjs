// TS SDK HTTP servers on 127.0.0.1:<port>.
// usage: node http_server.mjs <json|sse|legacy> <port>
//   json   : Streamable HTTP, stateful, enableJsonResponse: true   (POST/GET/DELETE /mcp)
//   sse    : Streamable HTTP, stateful, SSE responses              (POST/GET/DELETE /mcp)
//   legacy : SSEServerTransport (GET /sse + POST /messages?sessionId=)
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { registerDocsTools } from './docs_tools.mjs';

const [mode, portStr] = process.argv.slice(2);
const port = Number(portStr);
const TOOLS = ['search_docs', 'count_links', 'fetch_page', 'build_report', 'list_tags'];
const newServer = () => {
  const s = new McpServer({ name: `docs-indexer-http-${mode}`, version: '2.3.1' });
  registerDocsTools(s, { only: TOOLS });
  return s;
};
const readBody = (req) => new Promise((res, rej) => {
  const c = []; req.on('data', (d) => c.push(d)); req.on('end', () => res(Buffer.concat(c).toString('utf8'))); req.on('error', rej);
});

const transports = new Map();
const httpServer = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, `http://127.0.0.1:${port}`);
    if (mode === 'legacy') {
      if (req.method === 'GET' && url.pathname === '/sse') {
        const t = new SSEServerTransport('/messages', res);
        transports.set(t.sessionId, t);
        res.on('close', () => transports.delete(t.sessionId));
        await newServer().connect(t);
        return;
      }
      if (req.method === 'POST' && url.pathname === '/messages') {
        const t = transports.get(url.searchParams.get('sessionId'));
        if (!t) { res.writeHead(404).end('unknown session'); return; }
        await t.handlePostMessage(req, res);
        return;
      }
      res.writeHead(404).end();
      return;
    }
    if (url.pathname !== '/mcp') { res.writeHead(404).end(); return; }
    const sid = req.headers['mcp-session-id'];
    if (req.method === 'POST') {
      const body = JSON.parse(await readBody(req));
      let t = sid ? transports.get(sid) : undefined;
      if (!t && !sid && isInitializeRequest(body)) {
        t = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: mode === 'json',
          onsessioninitialized: (id) => transports.set(id, t),
        });
        t.onclose = () => { if (t.sessionId) transports.delete(t.sessionId); };
        await newServer().connect(t);
      }
      if (!t) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null }));
        return;
      }
      await t.handleRequest(req, res, body);
      return;
    }
    const t = sid && transports.get(sid);
    if (!t) { res.writeHead(400).end('Invalid or missing session ID'); return; }
    await t.handleRequest(req, res);
  } catch (e) {
    process.stderr.write(`server error: ${e?.stack ?? e}\n`);
    if (!res.headersSent) res.writeHead(500).end();
  }
});
httpServer.listen(port, '127.0.0.1', () => process.stderr.write(`listening ${mode} ${port}\n`));
process.on('SIGTERM', () => { httpServer.closeAllConnections?.(); httpServer.close(() => process.exit(0)); setTimeout(() => process.exit(0), 500); });
