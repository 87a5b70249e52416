// The API server the server's own tests talk to over HTTP: a SQLite store in a fresh data dir,
// admission in front, as `certsmith server` runs it; removed after the test file.
import { after } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore, type SqliteStore } from '../../store/sqlite/index.ts';
import { withAdmission } from '../admission.ts';
import { startApiServer, type RunningApiServer } from '../api-server.ts';

export async function startTestApiServer(prefix: string): Promise<{ api: RunningApiServer; raw: SqliteStore; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), `certsmith-${prefix}-`));
  const raw = openSqliteStore({ path: join(dataDir, 'state.db') });
  const api = await startApiServer({ store: withAdmission(raw) });
  after(async () => {
    await api.close();
    await raw.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { api, raw, dataDir };
}
