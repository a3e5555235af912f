// Tool implementations shared by the stdio and HTTP TS servers. Only the tool bodies are
// hand-written; every byte on the wire is produced by the SDK.
import { z } from 'zod';

const resultList = { total: z.number().int(), items: z.array(z.string()) };
const DOCS = ['getting-started.md', 'install.md', 'config/auth.md', 'config/proxy.md', 'api/search.md',
  'api/index.md', 'faq.md', 'changelog.md'];

// query_rows data: 60 rows, deterministic
const ROWS = Array.from({ length: 60 }, (_, i) => ({
  row_id: `r${String(i + 1).padStart(3, '0')}`, region: 'emea', amount: ((i * 7919) % 1000) + 0.5,
}));
export const encodeCursor = (o) => Buffer.from(JSON.stringify(o)).toString('base64');
export const decodeCursor = (c) => JSON.parse(Buffer.from(c, 'base64').toString('utf8'));

export function fetchPageText(bytes) {
  // ASCII, JSON-safe, repetitive (compresses well); exactly `bytes` bytes
  const unit = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit; docs page body. ';
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

const text = (t) => ({ type: 'text', text: t });

export function registerDocsTools(server, { afterCall = () => {}, only = null } = {}) {
  const reg = (name, cfg, fn) => {
    if (only && !only.includes(name)) return;
    server.registerTool(name, cfg, async (args, extra) => {
      const r = await fn(args ?? {}, extra);
      afterCall(name);
      return r;
    });
  };

  reg('search_docs', {
    description: 'Full-text search over the documentation index.',
    inputSchema: { query: z.string() },
    outputSchema: resultList,
  }, async ({ query }) => {
    const items = DOCS.filter((d) => d.includes(String(query).split(' ')[0])).slice(0, 3);
    const sc = { total: items.length, items };
    return { content: [text(JSON.stringify(sc))], structuredContent: sc };
  });

  // PROBLEM: extra property under additionalProperties:false
  reg('list_tags', {
    description: 'List the tags used in the index.',
    inputSchema: {},
    outputSchema: resultList,
  }, async () => {
    const sc = { total: 3, items: ['auth', 'proxy', 'search'], cache_hit: true };
    return { content: [text(JSON.stringify(sc))], structuredContent: sc };
  });

  // PROBLEM: isError result whose structuredContent fails the schema
  reg('sync_index', {
    description: 'Synchronise the index with the upstream repository.',
    inputSchema: { force: z.boolean().optional() },
    outputSchema: resultList,
  }, async () => ({
    content: [text('sync failed: upstream repository returned 503')],
    structuredContent: { total: -1, error: 'upstream 503' },
    isError: true,
  }));

  // PROBLEM: outputSchema declared, no structuredContent -> server-side isError
  reg('summarize_doc', {
    description: 'Summarise one document.',
    inputSchema: { path: z.string() },
    outputSchema: { summary: z.string(), words: z.number().int() },
  }, async ({ path }) => ({ content: [text(`Summary of ${path}: configuration of the auth proxy.`)] }));

  // PROBLEM: text says count=5, structuredContent says 7
  reg('count_links', {
    description: 'Count the outgoing links of a document.',
    inputSchema: { path: z.string() },
    outputSchema: { count: z.number().int() },
  }, async ({ path }) => ({ content: [text(`count=5 (links in ${path})`)], structuredContent: { count: 7 } }));

  // PROBLEM: content [] beside structuredContent
  reg('peek_cache', {
    description: 'Peek at the query cache.',
    inputSchema: {},
    outputSchema: resultList,
  }, async () => ({ content: [], structuredContent: { total: 2, items: ['q:auth', 'q:proxy'] } }));

  // PROBLEM (when page_size 20): the cursor advances only 10 rows
  reg('query_rows', {
    description: 'Query rows of a table, paginated with an opaque cursor.',
    inputSchema: { table: z.string(), page_size: z.number().int().optional(), cursor: z.string().optional() },
    outputSchema: {
      total: z.number().int(),
      items: z.array(z.object({ row_id: z.string(), region: z.string(), amount: z.number() })),
      next_cursor: z.string().optional(),
    },
  }, async ({ page_size = 10, cursor }) => {
    const offset = cursor ? decodeCursor(cursor).offset : 0;
    const items = ROWS.slice(offset, offset + page_size);
    const advance = page_size > 10 ? 10 : items.length; // bug: advances at most 10
    const sc = { total: ROWS.length, items };
    if (offset + advance < ROWS.length) sc.next_cursor = encodeCursor({ offset: offset + advance, region: 'emea' });
    return { content: [text(JSON.stringify(sc))], structuredContent: sc };
  });

  // large plain-text result (no outputSchema)
  reg('fetch_page', {
    description: 'Fetch a documentation page as plain text.',
    inputSchema: { bytes: z.number().int() },
  }, async ({ bytes }) => ({ content: [text(fetchPageText(bytes))] }));

  // progress notifications (HTTP captures)
  reg('build_report', {
    description: 'Build a report, reporting progress.',
    inputSchema: { steps: z.number().int().optional() },
  }, async ({ steps = 3 }, extra) => {
    const token = extra?._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      if (token !== undefined) {
        await extra.sendNotification({ method: 'notifications/progress',
          params: { progressToken: token, progress: i, total: steps, message: `step ${i}/${steps}` } });
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    return { content: [text(`report built in ${steps} steps`)] };
  });
}

// Replace McpServer's tools/list handler by one that pages its output (cursor = base64url JSON).
export function paginateToolsList(server, pageSize) {
  if (!pageSize) return;
  const handlers = server.server._requestHandlers;
  const orig = handlers.get('tools/list');
  handlers.set('tools/list', async (request, extra) => {
    const full = await orig(request, extra);
    const cur = request.params?.cursor;
    const start = cur ? JSON.parse(Buffer.from(cur, 'base64url').toString('utf8')).start : 0;
    const page = { ...full, tools: full.tools.slice(start, start + pageSize) };
    if (start + pageSize < full.tools.length) {
      page.nextCursor = Buffer.from(JSON.stringify({ start: start + pageSize })).toString('base64url');
    }
    return page;
  });
}
