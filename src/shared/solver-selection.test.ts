import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ACMESolver } from '../api/types.ts';
import { selectSolver } from './solver-selection.ts';
import { computeName, fnv32 } from '../controllers/acme/names.ts';

const both = [{ type: 'http-01', url: 'h', token: 't' }, { type: 'dns-01', url: 'd', token: 't' }];
const http = (selector?: ACMESolver['selector']): ACMESolver => ({ http01: { ingress: { class: 'x' } }, ...(selector ? { selector } : {}) });
const dns = (selector?: ACMESolver['selector']): ACMESolver => ({ dns01: { rfc2136: { nameserver: '127.0.0.1' } }, ...(selector ? { selector } : {}) });
const pick = (solvers: ACMESolver[], identifier: string, opts: { wildcard?: boolean; labels?: Record<string, string> } = {}) =>
  selectSolver(solvers, { identifier, wildcard: opts.wildcard, challenges: both }, opts.labels)?.solver;

test('a selector-less solver is the fallback; the earliest wins ties', () => {
  const a = http();
  const b = dns();
  assert.equal(pick([a, b], 'www.example.com'), a);
  assert.equal(pick([b, a], 'www.example.com'), b);
});

test('dnsNames beats dnsZones, longer zones beat shorter, labels break the rest', () => {
  const zone = dns({ dnsZones: ['example.com'] });
  const longer = dns({ dnsZones: ['sub.example.com'] });
  const exact = http({ dnsNames: ['www.sub.example.com'] });
  const labelled = http({ dnsZones: ['sub.example.com'], matchLabels: { team: 'a' } });
  assert.equal(pick([zone, longer], 'www.sub.example.com'), longer);
  assert.equal(pick([longer, zone], 'www.sub.example.com'), longer);
  assert.equal(pick([zone, longer, exact], 'www.sub.example.com'), exact);
  assert.equal(pick([longer, labelled], 'www.sub.example.com', { labels: { team: 'a' } }), labelled);
  assert.equal(pick([longer, labelled], 'www.sub.example.com', { labels: { team: 'b' } }), longer);
  // zones compare whole labels, case-insensitively
  assert.equal(pick([dns({ dnsZones: ['ample.com'] })], 'www.example.com'), undefined);
  assert.equal(pick([dns({ dnsZones: ['EXAMPLE.com'] })], 'www.example.com')?.dns01 !== undefined, true);
});

test('a wildcard authorization is solved by DNS-01 only, and dnsNames need the literal *.name', () => {
  const h = http();
  const d = dns({ dnsNames: ['*.example.com'] });
  assert.equal(pick([h], 'example.com', { wildcard: true }), undefined);
  assert.equal(pick([h, d], 'example.com', { wildcard: true }), d);
  assert.equal(pick([dns({ dnsNames: ['example.com'] })], 'example.com', { wildcard: true }), undefined);
  assert.equal(pick([dns({ dnsZones: ['example.com'] })], 'example.com', { wildcard: true })?.dns01 !== undefined, true);
});

test('names are cert-manager ComputeName: ≤ 52 characters, "-", FNV-1 32 in decimal', () => {
  // FNV-1 32 test vectors
  assert.equal(fnv32(Buffer.from('')), 0x811c9dc5);
  assert.equal(fnv32(Buffer.from('a')), 0x050c5d7e);
  const long = 'a'.repeat(50) + '--b'.repeat(5);
  const name = computeName(long, { x: 1 });
  assert.ok(name.length <= 63, name);
  assert.match(name, /^a{50}-\d+$/);
  assert.notEqual(computeName('web-1', { uid: '1' }), computeName('web-1', { uid: '2' }));
});
