import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Certificate, ClusterIssuer, EventType, NamespaceType, SecretType } from '../api/resources.ts';
import {
  formatLabelSelector, labelSelectorFromObject, matchesFields, matchesLabels, parseFieldSelector, parseFieldSelectorFor, parseLabelSelector,
} from './selectors.ts';
import { StoreError } from './store.ts';

const badRequest = (e: unknown) => e instanceof StoreError && e.code === 400;

test('label selector string syntax and semantics', () => {
  const labels = { env: 'prod', tier: 'web', n: '5' };
  const cases: [string, boolean][] = [
    ['', true], ['env=prod', true], ['env==prod', true], ['env = prod', true], ['env=dev', false],
    ['env!=dev', true], ['missing!=x', true], ['env in (dev, prod)', true], ['env in (dev)', false],
    ['env notin (dev)', true], ['missing notin (x)', true], ['env notin (prod)', false],
    ['tier', true], ['missing', false], ['!missing', true], ['!tier', false],
    ['env=prod,tier=web', true], ['env=prod,tier=api', false], ['n>4', true], ['n<5', false],
    ['example.com/key=v', false], ['env=', false], ['missing=', false],
  ];
  for (const [s, want] of cases) assert.equal(matchesLabels(parseLabelSelector(s), labels), want, s);
  assert.equal(matchesLabels(parseLabelSelector('empty='), { empty: '' }), true);
});

test('malformed label selectors are BadRequest naming the problem', () => {
  for (const s of ['env in prod', 'env in (a', '=x', 'a=b=c', 'a,,b', 'bad key=x', 'a=b c', 'a>x', '!', 'UPPER/x=1', `${'k'.repeat(64)}=v`, `a=${'v'.repeat(64)}`]) {
    assert.throws(() => parseLabelSelector(s), badRequest, s);
  }
});

test('"in ()" is the empty value, as kube\'s parser reads it (parseValues): it selects objects whose label is empty', () => {
  assert.equal(matchesLabels(parseLabelSelector('env in ()'), { env: '' }), true);
  assert.equal(matchesLabels(parseLabelSelector('env in ()'), { env: 'prod' }), false);
  assert.equal(matchesLabels(parseLabelSelector('env notin ()'), { env: 'prod' }), true);
});

test('metav1.LabelSelector objects convert, and format round-trips', () => {
  const sel = labelSelectorFromObject({ matchLabels: { app: 'x' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }, { key: 'gone', operator: 'DoesNotExist' }] });
  assert.ok(matchesLabels(sel, { app: 'x', tier: 'b' }));
  assert.ok(!matchesLabels(sel, { app: 'x', tier: 'b', gone: '' }));
  assert.ok(!matchesLabels(sel, { app: 'x' }));
  assert.equal(formatLabelSelector(sel), 'app=x,tier in (a,b),!gone');
  assert.deepEqual(parseLabelSelector(formatLabelSelector(sel)), sel);
  assert.ok(matchesLabels(labelSelectorFromObject(undefined), {}), 'no selector selects everything');
  assert.throws(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Equals', values: ['x'] }] }), badRequest);
  assert.throws(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }), badRequest);
  assert.throws(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }), badRequest);
});

test('field selectors: operators, escapes, fields allowed per kind', () => {
  const obj = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'a,b', namespace: 'ns' }, involvedObject: { kind: 'Certificate', name: 'c' }, reason: 'Issuing' };
  assert.ok(matchesFields(parseFieldSelector('metadata.name=a\\,b'), obj));
  assert.ok(matchesFields(parseFieldSelector('metadata.namespace==ns,metadata.name!=x'), obj));
  assert.ok(!matchesFields(parseFieldSelector('metadata.namespace!=ns'), obj));
  assert.deepEqual(parseFieldSelector('a=x\\=y\\\\').requirements, [{ field: 'a', operator: 'Equals', value: 'x=y\\' }]);
  assert.ok(matchesFields(parseFieldSelectorFor(EventType, 'involvedObject.kind=Certificate,involvedObject.name=c,reason=Issuing'), obj));
  assert.ok(matchesFields(parseFieldSelectorFor(EventType, 'involvedObject.uid='), obj), 'an absent field is the empty string');
  parseFieldSelectorFor(SecretType, 'type=kubernetes.io/tls');
  assert.throws(() => parseFieldSelectorFor(Certificate, 'spec.secretName=x'), /field label not supported: spec.secretName/);
  assert.throws(() => parseFieldSelectorFor(Certificate, 'type=x'), badRequest);
  for (const s of ['novalue', '=x', 'a=b=c', 'a=\\q']) assert.throws(() => parseFieldSelector(s), badRequest, s);
});

test('metadata.namespace is a field of namespaced kinds only, as in kube-apiserver', () => {
  for (const type of [ClusterIssuer, NamespaceType]) {
    assert.throws(() => parseFieldSelectorFor(type, 'metadata.namespace=foo'), (e: Error) => e.message === 'field label not supported: metadata.namespace', type.kind);
    assert.doesNotThrow(() => parseFieldSelectorFor(type, 'metadata.name=foo'));
  }
  assert.doesNotThrow(() => parseFieldSelectorFor(Certificate, 'metadata.namespace=foo'));
});
