import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { generateCRDs, crdDirectory, crdTypes } from './crdgen.ts';

test('deploy/crds matches what the schema generates', () => {
  for (const [name, text] of Object.entries(generateCRDs())) {
    const path = join(crdDirectory, name);
    assert.ok(existsSync(path), `deploy/crds/${name} is missing: run \`npm run gen:crds\``);
    assert.ok(readFileSync(path, 'utf8') === text, `deploy/crds/${name} is out of date with src/api/schema.ts: run \`npm run gen:crds\``);
  }
});

/** The one anyOf a structural schema may carry: x-kubernetes-int-or-string's integer-or-string. */
const isIntOrString = (node: any) => node['x-kubernetes-int-or-string'] === true && JSON.stringify(node.anyOf) === '[{"type":"integer"},{"type":"string"}]';

/** Kubernetes rejects non-structural schemas; these are the rules a generator can break. */
function structuralViolations(node: any, path: string, out: string[]): void {
  const open = node['x-kubernetes-preserve-unknown-fields'] === true || node['x-kubernetes-int-or-string'] === true;
  if (!node.type && !open) out.push(`${path}: no type`);
  for (const banned of ['anyOf', 'oneOf', 'allOf', 'patternProperties', '$ref', 'const']) if (banned in node && !(banned === 'anyOf' && isIntOrString(node))) out.push(`${path}: ${banned}`);
  if (typeof node.additionalProperties === 'boolean') out.push(`${path}: boolean additionalProperties`);
  if (node.properties && node.additionalProperties) out.push(`${path}: properties with additionalProperties`);
  if (node.properties) for (const [k, v] of Object.entries(node.properties)) structuralViolations(v, `${path}.${k}`, out);
  if (node.items) structuralViolations(node.items, `${path}[]`, out);
  if (typeof node.additionalProperties === 'object') structuralViolations(node.additionalProperties, `${path}{}`, out);
}

test('generated CRDs are structural, served with status subresource, short names and cert-manager printer columns', () => {
  const docs = Object.fromEntries(Object.entries(generateCRDs()).map(([n, t]) => [n, parse(t)]));
  assert.deepEqual(Object.keys(docs).sort(), crdTypes.map((t) => `${t.plural}.${t.group}.yaml`).sort());
  for (const [name, crd] of Object.entries<any>(docs)) {
    assert.equal(crd.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(`${crd.metadata.name}.yaml`, name);
    const v = crd.spec.versions[0];
    assert.deepEqual(v.subresources, { status: {} });
    const out: string[] = [];
    structuralViolations(v.schema.openAPIV3Schema, name, out);
    assert.deepEqual(out, []);
  }
  const cert = docs['certificates.cert-manager.io.yaml'];
  assert.deepEqual(cert.spec.names.shortNames, ['cert', 'certs']);
  // cert-manager v1.18 added them (deploy/crds); scripts written for a cluster use `kubectl get iss`
  assert.deepEqual(docs['issuers.cert-manager.io.yaml'].spec.names.shortNames, ['iss']);
  assert.deepEqual(docs['clusterissuers.cert-manager.io.yaml'].spec.names.shortNames, ['ciss']);
  assert.deepEqual(cert.spec.versions[0].additionalPrinterColumns.map((c: any) => c.name), ['Ready', 'Secret', 'Issuer', 'Status', 'Age']);
  assert.equal(docs['clusterissuers.cert-manager.io.yaml'].spec.scope, 'Cluster');
  assert.deepEqual(docs['challenges.acme.cert-manager.io.yaml'].spec.versions[0].additionalPrinterColumns.map((c: any) => c.name), ['State', 'Domain', 'Reason', 'Age']);
  const spec = cert.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  assert.deepEqual(spec.properties.privateKey.properties.rotationPolicy.enum, ['Never', 'Always']);
  assert.deepEqual(spec.properties.secretTemplate.properties.labels.additionalProperties, { type: 'string' });
  // only the webhook solver's config keeps arbitrary content, as upstream's CRDs do; every provider
  // and the solver pod template carry cert-manager's and Kubernetes' fields
  const solver = docs['issuers.cert-manager.io.yaml'].spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.acme.properties.solvers.items;
  assert.equal(solver.properties.dns01.properties.webhook.properties.config['x-kubernetes-preserve-unknown-fields'], true);
  assert.equal(solver.properties.dns01.properties.cloudDNS['x-kubernetes-preserve-unknown-fields'], undefined);
  assert.deepEqual(solver.properties.dns01.properties.cloudDNS.required, ['project']);
  assert.equal(solver.properties.http01.properties.ingress.properties.podTemplate.properties.spec['x-kubernetes-preserve-unknown-fields'], undefined);
  assert.deepEqual(Object.keys(solver.properties.dns01.properties.route53.properties).sort(), ['accessKeyID', 'accessKeyIDSecretRef', 'auth', 'hostedZoneID', 'region', 'role', 'secretAccessKeySecretRef']);
  assert.deepEqual(Object.keys(solver.properties.dns01.properties.cloudflare.properties).sort(), ['apiKeySecretRef', 'apiTokenSecretRef', 'email']);
});
