// certbot's CERTBOT_REMAINING_CHALLENGES: how many of the order's challenges come after this one.
// certbot runs its hooks one after the other (2, 1, 0 for three names); certsmith presents them at
// once, so the count cannot be "not presented yet" (every hook saw 2): it is the challenge's place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { remainingChallenges } from './remaining-challenges.ts';

const ch = (uid: string, dnsName: string, authz: string, type = 'DNS-01', wildcard = false) => ({
  metadata: { uid }, spec: { dnsName, authorizationURL: authz, type, wildcard },
});

test('each challenge of an order gets its own count, in the order\'s authorization order', () => {
  const a = ch('u1', 'a.example.test', 'https://ca/authz/3');
  const b = ch('u2', 'b.example.test', 'https://ca/authz/1');
  const c = ch('u3', 'c.example.test', 'https://ca/authz/2');
  const authorizations = ['https://ca/authz/1', 'https://ca/authz/2', 'https://ca/authz/3'];
  const all = [a, b, c];
  assert.deepEqual([b, c, a].map((x) => remainingChallenges(x, all, authorizations)), [2, 1, 0]);
});

test('rows: what counts and the order without authorizations', () => {
  const rows: { name: string; self: ReturnType<typeof ch>; all: ReturnType<typeof ch>[]; authorizations?: string[]; want: number }[] = [
    { name: 'alone', self: ch('u1', 'a.test', 'x'), all: [ch('u1', 'a.test', 'x')], want: 0 },
    { name: 'HTTP-01 challenges of the order do not count', self: ch('u1', 'a.test', 'x1'), all: [ch('u1', 'a.test', 'x1'), ch('u2', 'b.test', 'x2', 'HTTP-01')], authorizations: ['x1', 'x2'], want: 0 },
    { name: 'no authorizations listed yet: by name, then wildcard', self: ch('u1', 'a.test', ''), all: [ch('u1', 'a.test', ''), ch('u2', 'a.test', '', 'DNS-01', true), ch('u3', 'b.test', '')], want: 2 },
    { name: 'the wildcard after its base name', self: ch('u2', 'a.test', '', 'DNS-01', true), all: [ch('u1', 'a.test', ''), ch('u2', 'a.test', '', 'DNS-01', true), ch('u3', 'b.test', '')], want: 1 },
    { name: 'an authorization the order does not list goes last', self: ch('u1', 'a.test', 'gone'), all: [ch('u1', 'a.test', 'gone'), ch('u2', 'b.test', 'x2')], authorizations: ['x2'], want: 0 },
  ];
  for (const r of rows) assert.equal(remainingChallenges(r.self, r.all, r.authorizations ?? []), r.want, r.name);
});
