// docs-indexer: TS SDK McpServer over stdio with deliberately faulty tools.
// Env: DOCS_TOOLS_PAGE_SIZE (0 = unpaginated tools/list), DOCS_EXIT_AFTER_CALLS (exit early),
//      DOCS_SERVER_NAME / DOCS_SERVER_VERSION.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { registerDocsTools, paginateToolsList } from './docs_tools.mjs';

const server = new McpServer({
  name: process.env.DOCS_SERVER_NAME ?? 'docs-indexer',
  version: process.env.DOCS_SERVER_VERSION ?? '2.3.1',
});
const exitAfter = Number(process.env.DOCS_EXIT_AFTER_CALLS ?? 0);
let calls = 0;
registerDocsTools(server, {
  afterCall: () => {
    calls += 1;
    if (exitAfter && calls >= exitAfter) {
      // exit on our own shortly after the result is written: the host sees the process exit early
      setTimeout(() => { process.stderr.write('docs-indexer: exiting after ' + calls + ' calls\n'); process.exit(0); }, 150);
    }
  },
});
paginateToolsList(server, Number(process.env.DOCS_TOOLS_PAGE_SIZE ?? 0));
await server.connect(new StdioServerTransport());
process.stderr.write('docs-indexer: stdio server ready\n');
