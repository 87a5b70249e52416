// The API server the server's own tests talk to over HTTP: a SQLite store in a fresh data dir,
// admission in front, as `certsmith server` runs it; removed after the test file.
import { after } from 'node:test';
import http from 'node:http';
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

export interface JsonReply { status: number; body: any }

/**
 * A request to a test server, its answer parsed as JSON: a string body goes as it is (for bodies
 * no encoder would write), anything else as JSON.
 */
export function requestJSON(api: { url: string }, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<JsonReply> {
  const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, api.url), { method, headers: text === undefined ? {} : { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(text)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

/**
 * Opens a watch and resolves with its lines once `enough` says so (the watch is then closed), or
 * when the server ends it; `onOpen` runs once the response has started (to cause changes).
 */
export function watchLines<L = any>(api: { url: string }, path: string, enough: (lines: L[]) => boolean, onOpen: () => Promise<void> = async () => {}, headers: Record<string, string> = {}): Promise<L[]> {
  return new Promise((resolve, reject) => {
    const lines: L[] = [];
    let buf = '';
    const req = http.get(new URL(path, api.url), { headers }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}`));
      onOpen().catch(reject);
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        buf += d;
        for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
          lines.push(JSON.parse(buf.slice(0, i)));
          buf = buf.slice(i + 1);
        }
        if (enough(lines)) {
          req.destroy();
          resolve(lines);
        }
      });
      res.on('end', () => resolve(lines));
    });
    req.on('error', (e) => (lines.length ? undefined : reject(e)));
    setTimeout(() => { req.destroy(); reject(new Error(`no end after 10 s: ${JSON.stringify(lines)}`)); }, 10_000).unref();
  });
}
