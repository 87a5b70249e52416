import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { ensureServingCertificate } from './tls.ts';

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
