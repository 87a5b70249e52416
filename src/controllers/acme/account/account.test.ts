// registeredEmail: what the CA holds, compared with spec.acme.email to decide on an account update.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { registeredEmail } from './account.ts';
import { eabKeyOf } from './controller.ts';
import type { Secret } from '../../../api/meta.ts';

test('registeredEmail: the first contact without mailto:, lower-cased; none is the empty email', () => {
  const rows: [string[] | undefined, string][] = [
    [undefined, ''],
    [[], ''],
    [['mailto:ops@example.test'], 'ops@example.test'],
    [['mailto:Ops@Example.TEST', 'mailto:second@example.test'], 'ops@example.test'],
    [['MAILTO:a@example.test'], 'a@example.test'],
  ];
  for (const [contact, want] of rows) assert.equal(registeredEmail(contact), want, JSON.stringify(contact));
});

test("eabKeyOf: the EAB key, or why not in cert-manager's words: the Secret missing, the key missing, the key empty", () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const secret = (data: Record<string, string>): Secret => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'eab', namespace: 'cert-manager' }, data });
  assert.equal(eabKeyOf(secret({ key: b64('c2VjcmV0\n') }), { name: 'eab', key: 'key' }), 'c2VjcmV0');
  assert.equal(eabKeyOf(secret({ secret: b64('c2VjcmV0') }), { name: 'eab' }), 'c2VjcmV0', 'key defaults to "secret"');
  const rows: [Secret | undefined, string][] = [
    [undefined, 'Failed to register ACME account: secrets "eab" not found'],
    [secret({ other: b64('x') }), 'Failed to register ACME account: failed to find external account binding key data in Secret "eab" at index "key"'],
    [secret({ key: '' }), 'Failed to register ACME account: the external account binding key data in Secret "eab" at index "key" is empty'],
  ];
  for (const [s, message] of rows) assert.throws(() => eabKeyOf(s, { name: 'eab', key: 'key' }), (e: Error) => e.message === message, message);
});
