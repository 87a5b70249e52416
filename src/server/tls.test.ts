import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { ensureServingCertificate, keepServingCertificateFresh, SERVING_CHECK_MS, type ServingCertificate } from './tls.ts';
import { FakeClock } from '../runtime/clock.ts';

function withDir(fn: (dir: string) => Promise<void>) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'certsmith-tls-'));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

test('creates a CA and a loopback serving certificate that openssl verifies; keys are 0600', withDir(async (dir) => {
  const pki = await ensureServingCertificate(dir, { hosts: ['certsmith.local'] });
  const cert = new X509Certificate(pki.certPem);
  assert.ok(cert.checkIP('127.0.0.1'));
  assert.ok(cert.checkHost('localhost'));
  assert.ok(cert.checkHost('certsmith.local'));
  assert.ok(cert.checkPrivateKey((await import('node:crypto')).createPrivateKey(pki.keyPem)));
  const out = execFileSync('openssl', ['verify', '-CAfile', join(dir, 'pki', 'ca.crt'), join(dir, 'pki', 'serving.crt')], { encoding: 'utf8' });
  assert.match(out, /OK/);
  for (const f of ['ca.key', 'serving.key']) assert.equal(statSync(join(dir, 'pki', f)).mode & 0o777, 0o600, f);
}));

test('reused on restart; the serving certificate is renewed near expiry or for a new host, the CA kept', withDir(async (dir) => {
  const now = new Date('2026-01-01T00:00:00Z');
  const first = await ensureServingCertificate(dir, { now });
  const again = await ensureServingCertificate(dir, { now: new Date('2026-03-01T00:00:00Z') });
  assert.equal(again.certPem, first.certPem);
  assert.equal(again.keyPem, first.keyPem);

  const wider = await ensureServingCertificate(dir, { now, hosts: ['10.0.0.1'] });
  assert.notEqual(wider.certPem, first.certPem);
  assert.equal(wider.caPem, first.caPem);
  assert.ok(new X509Certificate(wider.certPem).checkIP('10.0.0.1'));

  // two thirds into the one-year lifetime
  const late = await ensureServingCertificate(dir, { now: new Date('2026-10-01T00:00:00Z'), hosts: ['10.0.0.1'] });
  assert.notEqual(late.certPem, wider.certPem);
  assert.equal(late.caPem, first.caPem);
  assert.ok(new Date(new X509Certificate(late.certPem).validTo) > new Date('2027-09-01T00:00:00Z'));
}));

test('unreadable material is replaced rather than fatal', withDir(async (dir) => {
  await ensureServingCertificate(dir);
  writeFileSync(join(dir, 'pki', 'serving.crt'), 'garbage');
  const pki = await ensureServingCertificate(dir);
  assert.ok(new X509Certificate(pki.certPem).checkIP('127.0.0.1'));
}));

test('a clock behind the CA (a stale boot, a step back) keeps the CA, which kubeconfigs handed out trust; the serving certificate is re-issued valid now', withDir(async (dir) => {
  const installed = await ensureServingCertificate(dir, { now: new Date('2026-11-27T12:00:00Z') });
  // booted 30 days in the past, before NTP corrects the clock
  const stale = new Date('2026-10-28T12:00:00Z');
  const booted = await ensureServingCertificate(dir, { now: stale });
  assert.equal(booted.caPem, installed.caPem, 'the CA is not replaced for a clock that is behind');
  const serving = new X509Certificate(booted.certPem);
  assert.ok(new Date(serving.validFrom) <= stale && stale < new Date(serving.validTo), 'the serving certificate is valid on the clock as it is');
  assert.ok(serving.verify(new X509Certificate(installed.caPem).publicKey));
}));

test('while the server runs, the serving certificate is renewed when due and after a step back, and handed to the listener', withDir(async (dir) => {
  const clock = new FakeClock('2026-01-01T00:00:00Z');
  const initial = await ensureServingCertificate(dir, { now: clock.now() });
  const handed: ServingCertificate[] = [];
  let current = initial;
  const stop = keepServingCertificateFresh({ dataDir: dir, clock, current: initial, apply: (tls) => { handed.push(tls); current = tls; } });
  try {
    // the check is asynchronous (files, a key to make): wait for it to have run
    const settle = async (count = handed.length) => {
      for (let i = 0; i < 50 && handed.length === count; i++) await new Promise((r) => setTimeout(r, 100));
    };
    clock.advance(30 * 24 * 3600_000);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(handed.length, 0, 'nothing to do a month in');
    // two thirds into its year: renewed without a restart
    clock.set('2026-09-15T00:00:00Z');
    // the check that was due fired at its own instant, in January; the next one is in September
    await new Promise((r) => setTimeout(r, 500));
    clock.advance(SERVING_CHECK_MS);
    await settle();
    assert.equal(handed.length, 1);
    assert.ok(new Date(new X509Certificate(current.certPem).validTo) > new Date('2027-09-01T00:00:00Z'));
    assert.equal(current.caPem, initial.caPem);
    // the wall clock stepped back before the new certificate's notBefore: re-issued valid again
    const back = new FakeClock('2026-06-01T00:00:00Z');
    stop();
    const stopBack = keepServingCertificateFresh({ dataDir: dir, clock: back, current, apply: (tls) => { handed.push(tls); current = tls; } });
    back.advance(15 * 60_000);
    await settle();
    stopBack();
    assert.equal(handed.length, 2);
    const serving = new X509Certificate(current.certPem);
    assert.ok(new Date(serving.validFrom) <= back.now());
  } finally {
    stop();
  }
}));

test('the listener serves a renewed certificate to new connections without a restart', withDir(async (dir) => {
  const { openSqliteStore } = await import('../store/sqlite/index.ts');
  const { startApiServer } = await import('./api-server.ts');
  const tls = await import('node:tls');
  const first = await ensureServingCertificate(dir, { now: new Date() });
  const store = openSqliteStore({ path: ':memory:' });
  const api = await startApiServer({ store, token: 't', tls: first, port: 0, host: '127.0.0.1' });
  const peer = () => new Promise<string>((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port: api.port, ca: first.caPem, servername: 'localhost' }, () => {
      resolve(socket.getPeerX509Certificate()!.serialNumber);
      socket.end();
    });
    socket.on('error', reject);
  });
  try {
    assert.equal(await peer(), new X509Certificate(first.certPem).serialNumber);
    // another host to cover: a new serving certificate, valid now, from the same CA
    const renewed = await ensureServingCertificate(dir, { now: new Date(), hosts: ['10.9.9.9'] });
    assert.notEqual(renewed.certPem, first.certPem);
    api.setServingCertificate(renewed);
    assert.equal(await peer(), new X509Certificate(renewed.certPem).serialNumber);
  } finally {
    await api.close();
    await store.close();
  }
}));

// kube-apiserver (Go's defaults) offers TLS 1.2 clients only AEAD suites with forward secrecy
// and refuses renegotiation; the listener offered Node's whole "HIGH" list (CCM8's 8-byte tag,
// ARIA, CBC with SHA-1) and accepted client-initiated renegotiation.
test('the API listener offers TLS 1.2 clients only ECDHE AEAD suites, and refuses renegotiation', withDir(async (dir) => {
  const { openSqliteStore } = await import('../store/sqlite/index.ts');
  const { startApiServer } = await import('./api-server.ts');
  const tls = await import('node:tls');
  const pair = await ensureServingCertificate(dir, { now: new Date() });
  const store = openSqliteStore({ path: ':memory:' });
  const api = await startApiServer({ store, token: 't', tls: pair, port: 0, host: '127.0.0.1' });
  const connect = (ciphers: string) => new Promise<import('node:tls').TLSSocket>((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port: api.port, ca: pair.caPem, servername: 'localhost', maxVersion: 'TLSv1.2', ciphers }, () => resolve(socket));
    socket.on('error', reject);
  });
  try {
    for (const weak of ['ECDHE-ECDSA-AES128-SHA', 'ECDHE-ECDSA-AES256-SHA384', 'ECDHE-ECDSA-AES128-CCM8', 'ECDHE-ECDSA-ARIA128-GCM-SHA256']) {
      // the server's refusal; or, where the client's OpenSSL will not offer the suite at all (Node 24's
      // and CCM8), the client's own
      await assert.rejects(connect(weak), /handshake failure|no shared cipher|alert|no ciphers available/i, weak);
    }
    const good = await connect('ECDHE-ECDSA-AES128-GCM-SHA256');
    assert.equal(good.getCipher().name, 'ECDHE-ECDSA-AES128-GCM-SHA256');
    // a server that renegotiates completes it at once; one that refuses answers with an alert
    // the client does not complete on
    const renegotiated = await new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve('not completed'), 2_000);
      good.on('error', (e) => resolve(`error: ${e.message}`));
      if (!good.renegotiate({}, (err) => { clearTimeout(timer); resolve(err ? `error: ${err.message}` : 'renegotiated'); })) resolve('not attempted');
    });
    assert.notEqual(renegotiated, 'renegotiated');
    good.destroy();
  } finally {
    await api.close();
    await store.close();
  }
}));
