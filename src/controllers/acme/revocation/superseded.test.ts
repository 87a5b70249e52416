import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Secret } from '../../../api/meta.ts';
import { MAX_PENDING, parsePending, supersededCertificate, withPending } from './superseded.ts';

/** A self-signed certificate for a fresh P-256 key (openssl), as a Secret holding it in tls.crt. */
function secretWithNewKey(dir: string, n: number): Secret {
  const key = join(dir, `k${n}.pem`);
  const crt = join(dir, `c${n}.pem`);
  writeFileSync(key, crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
  execFileSync('openssl', ['req', '-x509', '-new', '-key', key, '-subj', `/CN=t${n}`, '-days', '1', '-out', crt]);
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' }, data: { 'tls.crt': readFileSync(crt).toString('base64') } };
}

test('a certificate is superseded only when the Secret now certifies another key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'superseded-'));
  try {
    const a = secretWithNewKey(dir, 1);
    const b = secretWithNewKey(dir, 2);
    const der = supersededCertificate(a, b);
    assert.ok(der);
    assert.equal(new crypto.X509Certificate(Buffer.from(der, 'base64')).subject, 'CN=t1');
    assert.equal(supersededCertificate(a, a), undefined, 'same key: nothing superseded');
    assert.equal(supersededCertificate(undefined, b), undefined, 'first issuance');
    assert.equal(supersededCertificate(a, { ...a, data: {} }), undefined, 'an emptied Secret is no rotation');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the pending list: no duplicates, bounded, oldest dropped; garbage ignored', () => {
  assert.deepEqual(parsePending('QUJD, REVG ,,not base64!'), ['QUJD', 'REVG']);
  assert.deepEqual(withPending(['QQ=='], ['QQ==', 'Qg==']), { pending: ['QQ==', 'Qg=='], dropped: [] });
  const many = Array.from({ length: MAX_PENDING + 2 }, (_, i) => Buffer.from(String(i)).toString('base64'));
  const r = withPending(many.slice(0, MAX_PENDING), many.slice(MAX_PENDING));
  assert.equal(r.pending.length, MAX_PENDING);
  assert.deepEqual(r.dropped, many.slice(0, 2));
});
