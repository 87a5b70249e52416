// registeredEmail: what the CA holds, compared with spec.acme.email to decide on an account update.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { registeredEmail } from './account.ts';

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
