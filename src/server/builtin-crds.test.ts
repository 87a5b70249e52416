// cert-manager's CustomResourceDefinitions are listed as on a cluster with cert-manager installed,
// Established, so `kubectl get crd` and `kubectl wait --for=condition=Established crd/...` (as
// install scripts written for a cluster run them) work on the embedded server too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestJSON, startTestApiServer } from './testing/test-api-server.ts';
import { crdObject, crdTypes } from '../api/crdgen.ts';
import { CustomResourceDefinitionType } from '../api/resources.ts';
import { startApiServer } from './api-server.ts';

const { api, raw } = await startTestApiServer('crds');

const get = (path: string) => requestJSON(api, 'GET', path);

test('the six cert-manager CRDs are listed, Established, with the schema the server validates with', async () => {
  const list = await get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions');
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.items.map((c: any) => c.metadata.name).sort(),
    ['certificaterequests.cert-manager.io', 'certificates.cert-manager.io', 'challenges.acme.cert-manager.io', 'clusterissuers.cert-manager.io', 'issuers.cert-manager.io', 'orders.acme.cert-manager.io']);
  for (const crd of list.body.items) {
    const t = crdTypes.find((x) => `${x.plural}.${x.group}` === crd.metadata.name)!;
    assert.deepEqual(crd.spec, JSON.parse(JSON.stringify(crdObject(t).spec)), crd.metadata.name);
    const established = crd.status.conditions.find((c: any) => c.type === 'Established');
    assert.equal(established?.status, 'True');
    assert.equal(crd.status.conditions.find((c: any) => c.type === 'NamesAccepted')?.status, 'True');
    assert.deepEqual(crd.status.acceptedNames, crd.spec.names);
    assert.deepEqual(crd.status.storedVersions, ['v1']);
  }
});

test('a restart leaves them as they are; one edited by hand is put back', async () => {
  const before = await get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/certificates.cert-manager.io');
  const edited = { ...before.body, spec: { ...before.body.spec, names: { ...before.body.spec.names, shortNames: ['x'] } } };
  await raw.update(CustomResourceDefinitionType, edited);
  const again = await startApiServer({ store: raw });
  try {
    const after = await get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/certificates.cert-manager.io');
    assert.deepEqual(after.body.spec.names.shortNames, ['cert', 'certs']);
    assert.deepEqual(after.body.status.conditions, before.body.status.conditions, 'conditions keep their times');
    const other = await get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/issuers.cert-manager.io');
    const otherBefore = (await raw.get(CustomResourceDefinitionType, undefined, 'issuers.cert-manager.io'))!;
    assert.equal(other.body.metadata.resourceVersion, otherBefore.metadata.resourceVersion, 'an unchanged one is not written');
  } finally {
    await again.close();
  }
});
