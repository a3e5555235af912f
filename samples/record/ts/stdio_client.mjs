// TS SDK client driving docs_server.mjs through tee_shim.py over stdio.
// usage: node stdio_client.mjs <scenario: stdio_ts|hostlog|vscode> <workdir> <shim.py>
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const [scenario, work, shim] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const S = {
  stdio_ts: {
    clientInfo: { name: 'docs-assistant-cli', version: '4.2.0' },
    env: { DOCS_TOOLS_PAGE_SIZE: '4' },
  },
  hostlog: {
    clientInfo: { name: 'claude-ai', version: '0.1.0' },
    env: { DOCS_TOOLS_PAGE_SIZE: '0', DOCS_EXIT_AFTER_CALLS: '5' },
  },
  vscode: {
    clientInfo: { name: 'Visual Studio Code', version: '1.107.0' },
    env: { DOCS_TOOLS_PAGE_SIZE: '0' },
  },
}[scenario];

const observed = [];
const transportErrors = [];
const transport = new StdioClientTransport({
  command: 'python3',
  args: [shim, '--out', work, '--', process.execPath, path.join(here, 'docs_server.mjs')],
  env: { PATH: process.env.PATH, ...S.env },
  stderr: 'inherit',
});
const client = new Client(S.clientInfo, { capabilities: {} });
client.onerror = (e) => transportErrors.push(String(e?.message ?? e).slice(0, 300));
let closedAt = null;
client.onclose = () => { closedAt = new Date().toISOString(); };
await client.connect(transport);

async function step(label, fn) {
  const t0 = Date.now();
  try {
    const r = await fn();
    const summ = r && r.content !== undefined ? {
      isError: r.isError ?? false,
      structuredContent: r.structuredContent === undefined ? undefined : r.structuredContent,
      content: r.content.map((b) => (b.type === 'text' ? { type: 'text', bytes: Buffer.byteLength(b.text) } : { type: b.type })),
    } : (r && r.tools ? { tools: r.tools.map((t) => t.name), nextCursor: r.nextCursor } : r);
    observed.push({ label, outcome: 'result', ms: Date.now() - t0, result: summ });
  } catch (e) {
    observed.push({ label, outcome: 'exception', ms: Date.now() - t0, code: e?.code, message: String(e?.message ?? e).slice(0, 500) });
  }
}
const call = (name, args = {}, opts) => step(`tools/call ${name}`, () => client.callTool({ name, arguments: args }, undefined, opts));

if (scenario === 'stdio_ts') {
  await step('ping', () => client.ping());
  await step('tools/list (first page only, nextCursor not followed)', () => client.listTools());
  await call('search_docs', { query: 'config auth' });
  await call('list_tags');
  await call('sync_index', { force: true });
  await call('summarize_doc', { path: 'config/auth.md' });
  await call('count_links', { path: 'config/proxy.md' });
  await call('peek_cache');
  // tool-level pagination: page_size 20 returns 20 rows but the cursor advances 10; followed once with page_size 10 (10 rows repeat)
  await step('tools/call query_rows page 1', async () => {
    const r1 = await client.callTool({ name: 'query_rows', arguments: { table: 'orders', page_size: 20 } });
    observed.push({ label: 'query_rows next_cursor', cursor: r1.structuredContent?.next_cursor });
    const r2 = await client.callTool({ name: 'query_rows', arguments: { table: 'orders', page_size: 10, cursor: r1.structuredContent.next_cursor } });
    return r2;
  });
  // ~9.5 MiB frame (text 9,961,400 bytes)
  await call('fetch_page', { bytes: 9961400 }, { timeout: 120000 });
  await call('search_docs', { query: 'install' });
} else if (scenario === 'vscode') {
  await step('tools/list', () => client.listTools());
  await call('search_docs', { query: 'config proxy' });
  await call('search_docs', { query: 'install' });
} else {
  await step('tools/list', () => client.listTools());
  await call('search_docs', { query: 'config proxy' });
  await call('list_tags');
  await call('fetch_page', { bytes: 6000 });
  await call('count_links', { path: 'faq.md' });
  await call('search_docs', { query: 'faq' }); // 5th call: the server exits right after answering
  await new Promise((r) => setTimeout(r, 600));
  await call('search_docs', { query: 'changelog' }); // after the exit: Not connected
}
await new Promise((r) => setTimeout(r, 200));
await client.close().catch(() => {});
await new Promise((r) => setTimeout(r, 500));
writeFileSync(path.join(work, 'observed.json'), JSON.stringify({ scenario, clientInfo: S.clientInfo, steps: observed, transport_errors: transportErrors, closed_at: closedAt }, null, 1));
process.exit(0);
