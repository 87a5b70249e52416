// The API's Unix socket (startApiServer's socketPath): private, authenticated like HTTPS,
// never created through a symlink nor in a folder others can write, gone when the server stops.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { chmodSync, existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { startApiServer, SocketPathError } from './api-server.ts';

const token = 'socket-test-token';

function get(socketPath: string, path: string, bearer?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath, path, headers: bearer ? { Authorization: `Bearer ${bearer}` } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
  });
}

async function withFolder(fn: (dir: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-sock-'));
  try {
    await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the socket is 0600, needs the token like HTTPS, and is removed when the server stops', () => withFolder(async (dir) => {
  const store = openSqliteStore({ path: ':memory:' });
  const socketPath = join(dir, 'api.sock');
  const api = await startApiServer({ store, token, socketPath });
  try {
    assert.equal(api.socketPath, socketPath);
    assert.ok(lstatSync(socketPath).isSocket());
    assert.equal(statSync(socketPath).mode & 0o777, 0o600);
    const none = await get(socketPath, '/api/v1/namespaces');
    assert.equal(none.status, 401);
    assert.equal(none.body.kind, 'Status');
    assert.equal((await get(socketPath, '/api/v1/namespaces', 'wrong')).status, 401);
    const listed = await get(socketPath, '/api/v1/namespaces', token);
    assert.equal(listed.status, 200);
    assert.ok(listed.body.items.some((n: { metadata: { name: string } }) => n.metadata.name === 'default'));
  } finally {
    await api.close();
    await store.close();
  }
  assert.equal(existsSync(socketPath), false, 'the socket is gone after close');
}));

test('a socket left by a server that died is replaced', () => withFolder(async (dir) => {
  const socketPath = join(dir, 'api.sock');
  // a process killed while listening leaves its socket file behind
  const child = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(socketPath)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  assert.ok(lstatSync(socketPath).isSocket(), 'the dead server left its socket');

  const store = openSqliteStore({ path: ':memory:' });
  const api = await startApiServer({ store, token, socketPath });
  try {
    assert.equal((await get(socketPath, '/api/v1/namespaces', token)).status, 200);
  } finally {
    await api.close();
    await store.close();
  }
}));

test('a symlink or a file at the socket path is refused, not followed or removed', () => withFolder(async (dir) => {
  const socketPath = join(dir, 'api.sock');
  const target = join(dir, 'elsewhere');
  writeFileSync(target, 'keep me');
  symlinkSync(target, socketPath);
  const store = openSqliteStore({ path: ':memory:' });
  try {
    await assert.rejects(startApiServer({ store, token, socketPath }), (e: Error) => e instanceof SocketPathError && /is not a socket \(a symlink\)/.test(e.message));
    assert.ok(lstatSync(socketPath).isSymbolicLink(), 'the symlink is left for the administrator to look at');
    assert.equal(readFileSync(target, 'utf8'), 'keep me');
    rmSync(socketPath);
    writeFileSync(socketPath, 'a file');
    await assert.rejects(startApiServer({ store, token, socketPath }), SocketPathError);
    assert.equal(readFileSync(socketPath, 'utf8'), 'a file');
  } finally {
    await store.close();
  }
}));

test('a socket in a folder others can write is refused', () => withFolder(async (dir) => {
  chmodSync(dir, 0o777);
  const store = openSqliteStore({ path: ':memory:' });
  try {
    await assert.rejects(startApiServer({ store, token, socketPath: join(dir, 'api.sock') }), (e: Error) => e instanceof SocketPathError && /not a folder only this account can write/.test(e.message));
    assert.equal(existsSync(join(dir, 'api.sock')), false);
  } finally {
    await store.close();
  }
}));

test('a socket path too long for a socket address is left out; the TCP listener serves as before', () => withFolder(async (dir) => {
  const store = openSqliteStore({ path: ':memory:' });
  const api = await startApiServer({ store, token, socketPath: join(dir, 'x'.repeat(120)) });
  try {
    assert.equal(api.socketPath, undefined);
    assert.match(api.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  } finally {
    await api.close();
    await store.close();
  }
}));
