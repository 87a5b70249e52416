import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { createLogger } from '../runtime/logger.ts';
import { hostWithoutPort, startAcmeSolver } from './acmesolver.ts';

// from the sources, as every test runs certsmith (test/rig/certsmith-source.mjs)
const certsmithBin = fileURLToPath(new URL('../../test/rig/certsmith-source.mjs', import.meta.url));

function get(port: number, path: string, host: string, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers: { host }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('Host header without its port', () => {
  assert.equal(hostWithoutPort('a.example.test:8089'), 'a.example.test');
  assert.equal(hostWithoutPort('a.example.test'), 'a.example.test');
  assert.equal(hostWithoutPort('[::1]:80'), '::1');
  assert.equal(hostWithoutPort('[::1]'), '::1');
  assert.equal(hostWithoutPort(undefined), '');
});

test('answers the token for its domain only, 404 otherwise, health on / and /healthz, one log line per request', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  const logger = createLogger({ name: 'acmesolver', level: 'info', destination });
  const solver = await startAcmeSolver({ host: '127.0.0.1', port: 0, domain: 'www.example.test', token: 'tok-1', key: 'tok-1.thumb', logger });
  try {
    const path = '/.well-known/acme-challenge/tok-1';
    assert.deepEqual(await get(solver.port, path, 'www.example.test'), { status: 200, body: 'tok-1.thumb' });
    assert.deepEqual(await get(solver.port, path, 'www.example.test:80'), { status: 200, body: 'tok-1.thumb' }, 'the port in Host is ignored');
    assert.equal((await get(solver.port, path, 'WWW.Example.test')).status, 200);
    assert.equal((await get(solver.port, path, 'other.example.test')).status, 404, 'another host');
    assert.equal((await get(solver.port, '/.well-known/acme-challenge/tok-2', 'www.example.test')).status, 404, 'another token');
    assert.equal((await get(solver.port, '/x/.well-known/acme-challenge/tok-1', 'www.example.test')).status, 404, 'another base path');
    assert.equal((await get(solver.port, path, 'www.example.test', 'POST')).status, 404);
    assert.deepEqual(await get(solver.port, path, 'www.example.test', 'HEAD'), { status: 200, body: '' });
    assert.equal((await get(solver.port, '/', 'anything')).status, 200);
    assert.equal((await get(solver.port, '/healthz', 'anything')).status, 200);
    assert.equal(lines.length, 10);
    assert.deepEqual({ ...lines[0], time: undefined, remote: undefined }, {
      level: 'info', name: 'acmesolver', time: undefined, remote: undefined,
      method: 'GET', host: 'www.example.test', path, status: 200, msg: 'challenge answered',
    });
    assert.equal(lines[3].msg, 'host is not www.example.test');
    assert.ok(lines.every((l) => !JSON.stringify(l).includes('thumb')), 'the key authorization is not logged');
  } finally {
    await solver.close();
  }
});

test('certsmith acmesolver: cert-manager\'s flags, serves until SIGTERM, then exits 0', async () => {
  const child = spawn(process.execPath, [certsmithBin, 'acmesolver', '--listen-host=127.0.0.1', '--listen-port=0', '--domain=a.example.test', '--token=t0k', '--key=t0k.k'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let out = '';
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout!.on('data', (d) => {
        out += d;
        const m = /"port":(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`acmesolver exited ${code}: ${out}`)));
    });
    assert.deepEqual(await get(port, '/.well-known/acme-challenge/t0k', 'a.example.test'), { status: 200, body: 't0k.k' });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.match(out, /"msg":"challenge answered"/);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

test('certsmith acmesolver without --token fails with a message', async () => {
  const child = spawn(process.execPath, [certsmithBin, 'acmesolver', '--domain=a.example.test', '--key=k'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.notEqual(code, 0);
  assert.match(err, /--token is required/);
});
