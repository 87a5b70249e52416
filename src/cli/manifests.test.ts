import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManifestError, parseManifests } from './manifests.ts';

test('every document of a stream, List items unpacked, empty documents skipped, metadata always an object', () => {
  const text = [
    'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n',
    '',
    '# only a comment\n',
    'apiVersion: v1\nkind: List\nitems:\n- apiVersion: cert-manager.io/v1\n  kind: Issuer\n  metadata: {name: x}\n  spec: {selfSigned: {}}\n- {apiVersion: v1, kind: Secret}\n',
    '{"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "c"}, "spec": {"dnsNames": ["a.example"]}}\n',
  ].join('---\n');
  const got = parseManifests('m.yaml', text);
  assert.deepEqual(got.map((m) => `${m.obj.kind}/${m.obj.metadata.name ?? ''}`), ['Namespace/a', 'Issuer/x', 'Secret/', 'Certificate/c']);
  assert.ok(got.every((m) => m.file === 'm.yaml'));
  assert.deepEqual(got[2].obj.metadata, {});
  assert.deepEqual((got[3].obj as { spec?: unknown }).spec, { dnsNames: ['a.example'] });
});

test('a syntax error names the file and where it is, on one line', () => {
  const text = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n   bad: indent\n';
  assert.throws(() => parseManifests('bad.yaml', text), (e: unknown) => {
    assert.ok(e instanceof ManifestError);
    assert.equal(e.file, 'bad.yaml');
    assert.match(e.message, /^invalid YAML: .+ at line 10, column 7$/);
    return true;
  });
});

test('documents that are not objects, or lack apiVersion or kind, are refused', () => {
  assert.throws(() => parseManifests('f', '- a\n- b\n'), /a document is not an object/);
  assert.throws(() => parseManifests('f', 'kind: Secret\nmetadata: {name: x}\n'), /a document has no apiVersion or kind/);
});

test('YAML 1.2 core scalars (a date and yes stay strings); merge keys merge, as kubectl reads them', () => {
  const [m] = parseManifests('f', [
    'apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: x', '  annotations:', '    since: 2026-01-01', '    enabled: yes',
    'data: &base', '  a: "1"', 'spec:', '  <<: *base', '  b: "2"', '',
  ].join('\n'));
  assert.deepEqual(m.obj.metadata.annotations, { since: '2026-01-01', enabled: 'yes' });
  assert.deepEqual((m.obj as { spec?: unknown }).spec, { a: '1', b: '2' });
});

test('aliases that expand without bound, or into themselves, are refused, not expanded', () => {
  // each level doubles the one before: 2^40 values once expanded
  const levels = ['a0: &a0 [x, x]', ...Array.from({ length: 40 }, (_, i) => `a${i + 1}: &a${i + 1} [*a${i}, *a${i}]`)];
  const bomb = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n${levels.map((l) => `  ${l}`).join('\n')}\n`;
  assert.throws(() => parseManifests('bomb.yaml', bomb), (e: unknown) => {
    assert.ok(e instanceof ManifestError);
    assert.match(e.message, /^invalid YAML: aliases expand to more than [\d,]+ values/);
    return true;
  });
  // no aliases: however large, nothing is expanded (a List as `kubectl get -o yaml` writes it)
  const items = Array.from({ length: 120_000 }, (_, i) => `- {apiVersion: v1, kind: ConfigMap, metadata: {name: m${i}, labels: {a: b}}, data: {k: v, l: w}}`);
  assert.equal(parseManifests('list.yaml', `apiVersion: v1\nkind: List\nitems:\n${items.join('\n')}\n`).length, 120_000);
  assert.throws(() => parseManifests('loop.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: loop}\ndata: &d\n  self: *d\n'),
    /invalid YAML: an alias refers to a value that contains it/);
});

test('deep documents parse as deep as any schema nests (a CRD embedding a PodSpec), bottomless ones are refused', () => {
  const nested = (depth: number) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: ${'['.repeat(depth)}${']'.repeat(depth)}\n`;
  assert.equal(parseManifests('deep.yaml', nested(300)).length, 1);
  assert.throws(() => parseManifests('bottomless.yaml', nested(20_000)), (e: unknown) => {
    assert.ok(e instanceof ManifestError);
    assert.match(e.message, /^invalid YAML: nesting exceeded maxDepth \(1000\) at line 4, column \d+$/);
    return true;
  });
});
