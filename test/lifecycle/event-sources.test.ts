// Which controller an Event comes from, as cert-manager names it: each controller records with
// its own source, "cert-manager-<controller name>", which `kubectl describe` prints in its From
// column and `kubectl get events --field-selector source=...` filters on. The CertificateRequest
// controllers are named by issuer type (certificaterequests-issuer-ca, -selfsigned, ...), and
// approval is the approver's (certificaterequests-approver).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, certificate, withCA } from './harness.ts';
import { Certificate, CertificateRequest, EventType, Issuer, SecretType, type ResourceType } from '../../src/api/resources.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import type { CoreEvent } from '../../src/runtime/events.ts';

test('each Event of an issuance names the controller that recorded it, as cert-manager does', async () => {
  const lc = await startLifecycle();
  try {
    // the CA's own Certificate is signed by a SelfSigned ClusterIssuer, web's by the CA Issuer
    await withCA(lc);
    await lc.apply(certificate('web', { dnsNames: ['web.example.test'] }));
    await lc.settle();

    const events = (await lc.store.list<CoreEvent>(EventType, { namespace: 'default' })).items;
    const sources = (name: string) => events
      .filter((e) => e.involvedObject.name === name)
      .map((e) => `${e.involvedObject.kind} ${e.reason}: ${e.source.component}`)
      .sort();
    assert.deepEqual(sources('web'), [
      'Certificate Generated: cert-manager-certificates-key-manager',
      'Certificate Issuing: cert-manager-certificates-issuing',
      'Certificate Issuing: cert-manager-certificates-trigger',
      'Certificate Requested: cert-manager-certificates-request-manager',
    ]);
    assert.deepEqual(sources('web-1'), [
      'CertificateRequest CertificateIssued: cert-manager-certificaterequests-issuer-ca',
      'CertificateRequest cert-manager.io: cert-manager-certificaterequests-approver',
    ]);
    assert.deepEqual(sources('root-1'), [
      'CertificateRequest CertificateIssued: cert-manager-certificaterequests-issuer-selfsigned',
      'CertificateRequest cert-manager.io: cert-manager-certificaterequests-approver',
    ]);
    // client-go's recorder reports the same component as the event's reporting controller
    for (const e of events) assert.equal(e.reportingComponent, e.source.component, `${e.reason} on ${e.involvedObject.name}`);

    // what a user filters on
    const fromIssuing = (await lc.store.list<CoreEvent>(EventType, { namespace: 'default', fieldSelector: 'source=cert-manager-certificates-issuing' })).items;
    assert.deepEqual(fromIssuing.map((e) => `${e.involvedObject.name} ${e.message}`).sort(), [
      'root The certificate has been successfully issued',
      'web The certificate has been successfully issued',
    ]);
  } finally {
    await lc.stop();
  }
});

test('each write names its controller as cert-manager\'s field managers do ("cert-manager-<controller>"), so managedFields, apply conflicts and GitOps settings read the same', async () => {
  // cert-manager's controller context: FieldManager = util.PrefixFromUserAgent(restConfig.UserAgent),
  // the user agent being "cert-manager-<component>/<version> ..."
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('web', { dnsNames: ['web.example.test'] }));
    await lc.settle();
    const managers = async (type: ResourceType, name: string) => ((await lc.store.get<KubeObject>(type, 'default', name))?.metadata.managedFields ?? []).map((m) => (m as { manager?: string }).manager ?? '').sort();
    assert.deepEqual(await managers(SecretType, 'web-tls'), ['cert-manager-certificates-issuing']);
    assert.deepEqual(await managers(CertificateRequest, 'web-1'), ['cert-manager-certificates-request-manager']);
    // the harness applies without a field manager, and status writes are not recorded in managedFields (yet): what is there is a controller's
    for (const [type, name] of [[Certificate, 'web'], [Issuer, 'ca'], [SecretType, 'ca-keypair']] as const) {
      for (const m of await managers(type, name)) assert.match(m, /^cert-manager-/, `${type.kind} ${name}`);
    }
  } finally {
    await lc.stop();
  }
});
