// The server side of watch-memory.test.ts, in its own process so its RSS is its own: an API
// server on a file-backed store; "rss" on stdin answers with the resident set after a full GC.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { withAdmission } from './admission.ts';
import { startApiServer } from './api-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-watchmem-'));
const raw = openSqliteStore({ path: join(dir, 'state.db') });
const api = await startApiServer({ store: withAdmission(raw) });
const gc = (globalThis as { gc?: () => void }).gc;
process.stdout.write(JSON.stringify({ url: api.url }) + '\n');
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'rss') {
    gc?.();
    await new Promise((r) => setTimeout(r, 50));
    gc?.();
    const m = process.memoryUsage();
    process.stdout.write(JSON.stringify({ rss: m.rss, heap: m.heapUsed, external: m.external }) + '\n');
  } else if (line === 'exit') break;
}
await api.close();
await raw.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
