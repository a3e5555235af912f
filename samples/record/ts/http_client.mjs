// TS SDK client over Streamable HTTP or legacy HTTP+SSE, recording every HTTP exchange through a
// fetch wrapper that tees the response body (the SDK sees the unchanged stream).
// usage: node http_client.mjs <json|sse|legacy> <base-url> <workdir>
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

const [mode, base, work] = process.argv.slice(2);
const nowUs = () => Number(process.hrtime.bigint() / 1000n - hr0) + t0us;
const hr0 = process.hrtime.bigint() / 1000n; const t0us = Date.now() * 1000;
const exchanges = [];
const hdrs = (h) => (h instanceof Headers ? Object.fromEntries(h.entries()) : { ...(h ?? {}) });

async function recFetch(url, init = {}) {
  const ex = { ex: exchanges.length, method: init.method ?? 'GET', url: String(url), req_headers: hdrs(init.headers),
    req_body: typeof init.body === 'string' ? init.body : null, t_req_us: nowUs(), chunks: [] };
  exchanges.push(ex);
  let res;
  try { res = await fetch(url, init); } catch (e) { ex.fetch_error = String(e); ex.status = null; throw e; }
  ex.status = res.status; ex.t_res_us = nowUs(); ex.res_headers = Object.fromEntries(res.headers.entries());
  if (!res.body) { ex.res_body_complete = true; return res; }
  const [a, b] = res.body.tee();
  (async () => {
    const r = b.getReader();
    try {
      for (;;) { const { done, value } = await r.read(); if (done) break; ex.chunks.push({ ts_us: nowUs(), b64: Buffer.from(value).toString('base64') }); }
      ex.res_body_complete = true;
    } catch (e) { ex.res_body_complete = false; ex.res_body_error = String(e); }
    ex.t_end_us = nowUs();
  })();
  return new Response(a, { status: res.status, statusText: res.statusText, headers: res.headers });
}

const infos = {
  json: { name: 'docs-assistant-web', version: '5.1.0' },
  sse: { name: 'Docs Agent (SSE)', version: '0.9.0-beta.5' },
  legacy: { name: 'legacy-sse-bridge', version: '0.14.3' },
};
const client = new Client(infos[mode], { capabilities: {} });
const transportErrors = [];
client.onerror = (e) => transportErrors.push(String(e?.message ?? e).slice(0, 300));
const transport = mode === 'legacy'
  ? new SSEClientTransport(new URL(base + '/sse'), { fetch: recFetch })
  : new StreamableHTTPClientTransport(new URL(base + '/mcp'), { fetch: recFetch });
await client.connect(transport);
const observed = []; const progress = [];
async function step(label, fn) {
  try { const r = await fn(); observed.push({ label, outcome: 'result', isError: r?.isError, tools: r?.tools?.map((t) => t.name) }); }
  catch (e) { observed.push({ label, outcome: 'exception', code: e?.code, message: String(e?.message ?? e).slice(0, 300) }); }
}
await step('tools/list', () => client.listTools());
await step('search_docs', () => client.callTool({ name: 'search_docs', arguments: { query: 'config auth' } }));
await step('count_links', () => client.callTool({ name: 'count_links', arguments: { path: 'faq.md' } }));
await step('fetch_page 3000', () => client.callTool({ name: 'fetch_page', arguments: { bytes: 3000 } }));
if (mode !== 'json') {
  await step('build_report with progress', () => client.callTool({ name: 'build_report', arguments: { steps: 3 } }, undefined,
    { onprogress: (p) => progress.push(p) }));
}
await new Promise((r) => setTimeout(r, 300));
if (mode !== 'legacy') await transport.terminateSession().catch((e) => transportErrors.push('terminate: ' + e));
await client.close().catch(() => {});
await new Promise((r) => setTimeout(r, 500));
writeFileSync(path.join(work, 'http_exchanges.json'), JSON.stringify({ mode, base, clientInfo: infos[mode], exchanges }, null, 0));
writeFileSync(path.join(work, 'observed.json'), JSON.stringify({ clientInfo: infos[mode], steps: observed, progress_received: progress, transport_errors: transportErrors }, null, 1));
process.exit(0);
