// applyManifests (certsmith apply, server --apply): Namespaces go first and an object in a
// namespace that neither exists nor comes with the apply is refused, with nothing stored;
// unknown fields are refused (Strict, the default), or dropped with a warning (Warn).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { withAdmission } from '../server/admission.ts';
import { Issuer, NamespaceType } from '../api/resources.ts';
import type { KubeObject } from '../api/meta.ts';
import { applyManifests } from './apply-manifests.ts';

const issuer = (ns: string, spec: Record<string, unknown> = { selfSigned: {} }) => ({ file: 'm.yaml', obj: { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'i', namespace: ns }, spec } as KubeObject });
const namespace = (name: string) => ({ file: 'm.yaml', obj: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } as KubeObject });

test('an object in a namespace that does not exist is refused and nothing is stored', async () => {
  const store = withAdmission(openSqliteStore({ path: ':memory:' }));
  try {
    const report = await applyManifests(store, [issuer('default'), issuer('team-a')], { defaultNamespace: 'default' });
    assert.deepEqual(report.errors, ['error: m.yaml: Issuer team-a/i: namespaces "team-a" not found']);
    assert.equal(await store.get(Issuer, 'default', 'i'), undefined);
    assert.equal(await store.get(NamespaceType, undefined, 'team-a'), undefined);
  } finally {
    await store.close();
  }
});

test('Namespaces are applied before the objects in them, wherever they are in the manifests', async () => {
  const store = withAdmission(openSqliteStore({ path: ':memory:' }));
  try {
    const report = await applyManifests(store, [issuer('team-a'), namespace('team-a'), issuer('cert-manager')], { defaultNamespace: 'default' });
    assert.deepEqual(report.errors, []);
    assert.deepEqual(report.applied, ['namespace/team-a created', 'issuer.cert-manager.io/i created', 'issuer.cert-manager.io/i created']);
    assert.ok(await store.get(Issuer, 'team-a', 'i'));
  } finally {
    await store.close();
  }
});

test('unknown fields: refused by default, dropped with a warning under Warn', async () => {
  const store = withAdmission(openSqliteStore({ path: ':memory:' }));
  try {
    const typo = issuer('default', { selfSigned: {}, selfsigned: {} });
    const strict = await applyManifests(store, [typo], { defaultNamespace: 'default' });
    assert.deepEqual(strict.errors, ['error: m.yaml: Issuer default/i: strict decoding error: unknown field "spec.selfsigned"']);
    const warn = await applyManifests(store, [typo], { defaultNamespace: 'default', fieldValidation: 'Warn' });
    assert.deepEqual(warn.errors, []);
    assert.deepEqual(warn.warnings, ['Warning: unknown field "spec.selfsigned"']);
    assert.deepEqual((await store.get<KubeObject>(Issuer, 'default', 'i'))!.spec, { selfSigned: {} });
  } finally {
    await store.close();
  }
});
