// certsmith's generated CRDs against cert-manager's own (test/data/upstream-crds, v1.21): every
// upstream property path, in spec and status of every served version, must exist in ours with the
// same type, format, enum set, list/map type, required list, string and number bounds, defaults
// and CEL rules. Each deliberate difference is listed in upstreamDifferences with its reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { generateCRDs } from './crdgen.ts';

type Node = Record<string, any>;

/** What is compared at each path; `missing` means the path is not in certsmith's schema at all. */
export type Aspect = 'missing' | 'type' | 'format' | 'enum' | 'list-type' | 'list-map-keys' | 'map-type' | 'required'
  | 'pattern' | 'maxLength' | 'minLength' | 'minimum' | 'maximum' | 'int-or-string' | 'preserve-unknown-fields' | 'validations' | 'default' | 'version';

export interface AllowedDifference { path: string; aspect: Aspect; reason: string }

/**
 * Where certsmith deliberately differs from upstream. Paths are `<Kind>.<field path>` with `[]` for
 * list items and `{}` for map values; each entry must match a difference the comparison finds.
 */
export const upstreamDifferences: AllowedDifference[] = [
  ...['Certificate', 'CertificateRequest'].map((kind) => ({
    path: kind, aspect: 'required' as const,
    reason: 'spec is required at the root: cert-manager\'s webhook refuses a spec-less object too (issuerRef and secretName/request are required), certsmith says so in the schema',
  })),
  {
    path: 'Certificate.spec.renewal.policy', aspect: 'enum',
    reason: 'certsmith addition: the EarliestWindow policy renews at the first renewal window after the ordinary renewal time',
  },
  {
    path: 'Certificate.spec.renewal.windows[]', aspect: 'required',
    reason: 'windowDuration is not required: the seed spelling `duration` is accepted in its place',
  },
  {
    path: 'Certificate.spec.renewal.windows[].cron', aspect: 'type',
    reason: 'certsmith accepts a list of cron expressions as well as one string, so the field is untyped (x-kubernetes-preserve-unknown-fields) and checked by the webhook rules',
  },
  {
    path: 'Certificate.spec.renewal.windows[].cron', aspect: 'minLength',
    reason: 'a string or a list: emptiness is checked by the webhook rules, not by the untyped schema',
  },
  {
    path: 'Certificate.spec.renewal.windows[].cron', aspect: 'preserve-unknown-fields',
    reason: 'a string or a list of strings needs an untyped, preserved schema in a structural CRD',
  },
];

/** One difference found by compareCRD. */
export interface Difference { path: string; aspect: Aspect; upstream: unknown; ours: unknown }

const sameSet = (a: unknown, b: unknown) => {
  const x = Array.isArray(a) ? [...a].map((v) => JSON.stringify(v)).sort() : [];
  const y = Array.isArray(b) ? [...b].map((v) => JSON.stringify(v)).sort() : [];
  return Array.isArray(a) === Array.isArray(b) && JSON.stringify(x) === JSON.stringify(y);
};

const scalarAspects: [Aspect, string][] = [
  ['type', 'type'], ['format', 'format'], ['list-type', 'x-kubernetes-list-type'], ['map-type', 'x-kubernetes-map-type'],
  ['pattern', 'pattern'], ['maxLength', 'maxLength'], ['minLength', 'minLength'], ['minimum', 'minimum'], ['maximum', 'maximum'],
  ['int-or-string', 'x-kubernetes-int-or-string'], ['preserve-unknown-fields', 'x-kubernetes-preserve-unknown-fields'],
];
const setAspects: [Aspect, string][] = [['enum', 'enum'], ['list-map-keys', 'x-kubernetes-list-map-keys'], ['required', 'required']];

const celRules = (n: Node) => (Array.isArray(n['x-kubernetes-validations']) ? n['x-kubernetes-validations'].map((v: Node) => `${v.rule} / ${v.message ?? ''}`) : undefined);

function compareNode(up: Node, ours: Node | undefined, path: string, out: Difference[]): void {
  // an object left open (preserve-unknown-fields, no properties) has none of upstream's paths
  if (!ours || (up.properties && !ours.properties)) {
    out.push({ path, aspect: 'missing', upstream: up.type ?? 'untyped', ours: ours ? 'open object' : undefined });
    return;
  }
  for (const [aspect, key] of scalarAspects) {
    if (up[key] !== ours[key]) out.push({ path, aspect, upstream: up[key], ours: ours[key] });
  }
  for (const [aspect, key] of setAspects) {
    if ((up[key] !== undefined || ours[key] !== undefined) && !sameSet(up[key], ours[key])) out.push({ path, aspect, upstream: up[key], ours: ours[key] });
  }
  if (JSON.stringify(up.default) !== JSON.stringify(ours.default)) out.push({ path, aspect: 'default', upstream: up.default, ours: ours.default });
  const upRules = celRules(up);
  if ((upRules || celRules(ours)) && !sameSet(upRules, celRules(ours))) out.push({ path, aspect: 'validations', upstream: upRules, ours: celRules(ours) });
  for (const [k, v] of Object.entries<Node>(up.properties ?? {})) compareNode(v, ours.properties?.[k], path === '' ? k : `${path}.${k}`, out);
  if (up.items) compareNode(up.items, ours.items, `${path}[]`, out);
  if (up.additionalProperties && typeof up.additionalProperties === 'object') compareNode(up.additionalProperties, ours.additionalProperties, `${path}{}`, out);
}

/** Every difference between an upstream CRD and ours, walking upstream's paths in every served version. */
export function compareCRD(upstream: Node, ours: Node): Difference[] {
  const kind = upstream.spec.names.kind as string;
  const out: Difference[] = [];
  for (const v of upstream.spec.versions as Node[]) {
    if (!v.served) continue;
    const mine = (ours.spec.versions as Node[]).find((o) => o.name === v.name);
    if (!mine?.served) {
      out.push({ path: `${kind}@${v.name}`, aspect: 'version', upstream: 'served', ours: mine ? 'not served' : undefined });
      continue;
    }
    const diffs: Difference[] = [];
    compareNode(v.schema.openAPIV3Schema, mine.schema.openAPIV3Schema, '', diffs);
    out.push(...diffs.map((d) => ({ ...d, path: d.path === '' ? kind : `${kind}.${d.path}` })));
  }
  return out;
}

const upstreamDir = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', 'test', 'data', 'upstream-crds');

function loadUpstream(): Node[] {
  return readdirSync(upstreamDir).filter((f) => f.endsWith('.yaml')).sort()
    .map((f) => parse(readFileSync(join(upstreamDir, f), 'utf8')) as Node);
}

function oursByName(): Map<string, Node> {
  return new Map(Object.values(generateCRDs()).map((text) => {
    const doc = parse(text) as Node;
    return [doc.metadata.name as string, doc];
  }));
}

const key = (d: { path: string; aspect: Aspect }) => `${d.path} (${d.aspect})`;
const show = (d: Difference) => `${key(d)}: upstream ${JSON.stringify(d.upstream)}, certsmith ${JSON.stringify(d.ours)}`;

test('every upstream CRD property path is in certsmith\'s CRDs with the same type and constraints, or allow-listed with a reason', (t) => {
  const upstream = loadUpstream();
  const ours = oursByName();
  assert.equal(upstream.length, 6, 'the six cert-manager CRDs are in test/data/upstream-crds');
  const found: Difference[] = [];
  for (const crd of upstream) {
    const mine = ours.get(crd.metadata.name);
    assert.ok(mine, `certsmith generates no CRD named ${crd.metadata.name}`);
    found.push(...compareCRD(crd, mine));
  }
  const allowed = new Set(upstreamDifferences.map(key));
  const unexpected = found.filter((d) => !allowed.has(key(d)));
  const foundKeys = new Set(found.map(key));
  const stale = upstreamDifferences.filter((a) => !foundKeys.has(key(a)));
  t.diagnostic(`${found.length} differences, ${found.length - unexpected.length} allow-listed`);
  for (const d of found.filter((x) => allowed.has(key(x)))) t.diagnostic(`allowed: ${show(d)}`);
  assert.deepEqual(unexpected.map(show), [], `differences from upstream's CRDs not in upstreamDifferences:\n${unexpected.map(show).join('\n')}`);
  assert.deepEqual(stale.map(key), [], 'allow-list entries that no longer match a difference (remove them)');
  for (const a of upstreamDifferences) assert.ok(a.reason.length > 10, `${key(a)} needs a reason`);
});

test('the comparison notices a property removed from certsmith\'s schema, a changed type and a changed enum', () => {
  const issuers = loadUpstream().find((c) => c.spec.names.kind === 'Issuer')!;
  const ours = oursByName().get('issuers.cert-manager.io')!;
  const baseline = new Set(compareCRD(issuers, ours).map(key));
  const changed = structuredClone(ours);
  const spec = changed.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
  delete spec.vault.properties.auth.properties.aws;
  spec.acme.properties.solvers.items.properties.http01.properties.gatewayHTTPRoute.properties.parentRefs.items.properties.port.type = 'string';
  spec.acme.properties.solvers.items.properties.dns01.properties.cnameStrategy.enum = ['None'];
  const fresh = compareCRD(issuers, changed).filter((d) => !baseline.has(key(d))).map(key).sort();
  assert.deepEqual(fresh, [
    'Issuer.spec.acme.solvers[].dns01.cnameStrategy (enum)',
    'Issuer.spec.acme.solvers[].http01.gatewayHTTPRoute.parentRefs[].port (type)',
    'Issuer.spec.vault.auth.aws (missing)',
  ]);
});
