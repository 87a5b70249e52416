// No private key, whole or cut at either end, survives into an Event or a notification message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { redactKeyMaterial } from './redact-keys.ts';

test('redactKeyMaterial: whole blocks, a block cut at its start (a tail of output) or its end', () => {
  const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const sec1 = privateKey.export({ type: 'sec1', format: 'pem' }).toString();
  const body = pem.split('\n').slice(1, -2).join('\n');
  const rows: [string, string, string][] = [
    ['a whole PKCS#8 block', `before\n${pem}after`, 'before\n[private key redacted]\nafter'],
    ['a whole SEC1 block', `${sec1}`, '[private key redacted]\n'],
    ['the BEGIN line cut off, mid-line', `…${body.slice(7)}\n-----END PRIVATE KEY-----\nreload failed`, '…[private key redacted]\nreload failed'],
    ['the BEGIN line cut off, on a line boundary', `status 1: ${body.split('\n').at(-1)}\n-----END RSA PRIVATE KEY-----`, 'status 1: [private key redacted]'],
    ['the END line cut off', `a -----BEGIN PRIVATE KEY-----\n${body.slice(0, 30)}`, 'a [private key redacted]'],
    ['two blocks', `${pem}${pem}`, '[private key redacted]\n[private key redacted]\n'],
    ['a certificate stays', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----'],
    ['ordinary words stay', 'exited with status 1 (attempt 1, retrying in 1m0s): reload of web failed', 'exited with status 1 (attempt 1, retrying in 1m0s): reload of web failed'],
  ];
  for (const [why, input, want] of rows) assert.equal(redactKeyMaterial(input), want, why);
});
