// certsmith status certificate: the events it shows are its Certificate's, its Issuer's, its
// Secret's and its request's, and it asks the server for the events of those names only, not for
// the whole namespace's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { FakeClock } from '../runtime/clock.ts';
import { Certificate, CertificateRequest, EventType, Order } from '../api/resources.ts';
import { CertificateAnnotation } from '../api/annotations.ts';
import type { KubeObject } from '../api/meta.ts';
import type { ListOptions, Store } from '../store/store.ts';
import { certificateStatus } from './status.ts';

test('status shows the events of its Certificate and request, and lists no others', async () => {
  const store = openSqliteStore({ path: ':memory:', clock: new FakeClock('2026-01-01T00:00:00Z') });
  try {
    const certificate = (name: string) => store.create(Certificate, {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name, namespace: 'default' },
      spec: { secretName: `${name}-tls`, dnsNames: [`${name}.example.test`], issuerRef: { name: 'ca' } },
    } as KubeObject);
    const [web, other] = [await certificate('web'), await certificate('other')];
    const request = (crt: KubeObject) => store.create(CertificateRequest, {
      apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
      metadata: {
        name: `${crt.metadata.name}-1`, namespace: 'default', annotations: { [CertificateAnnotation.revision]: '1' },
        ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: crt.metadata.name!, uid: crt.metadata.uid!, controller: true }],
      },
      spec: { request: '', issuerRef: { name: 'ca' } },
    } as KubeObject);
    const [webRequest, otherRequest] = [await request(web), await request(other)];
    let n = 0;
    const event = (about: KubeObject, reason: string) => store.create(EventType, {
      apiVersion: 'v1', kind: 'Event', metadata: { name: `e${++n}`, namespace: 'default' },
      involvedObject: { kind: about.kind, name: about.metadata.name, namespace: 'default', uid: about.metadata.uid },
      type: 'Normal', reason, message: `${reason} of ${about.metadata.name}`, count: 1, lastTimestamp: `2026-01-01T00:00:0${n}Z`,
    } as KubeObject);
    await event(web, 'Issuing');
    await event(other, 'Issuing');
    await event(webRequest, 'Approved');
    await event(otherRequest, 'Approved');

    const eventLists: ListOptions[] = [];
    const recording: Store = Object.assign(Object.create(store) as Store, {
      list: (type: Parameters<Store['list']>[0], opts?: ListOptions) => {
        if (type === EventType) eventLists.push(opts ?? {});
        return store.list(type, opts);
      },
    });
    const text = await certificateStatus(recording, 'default', 'web');
    // these Events have no firstTimestamp and no source: Age <unknown>, From empty, as cmctl shows them
    assert.match(text, /^Events:\n {2}Type +Reason +Age +From +Message\n {2}---- +------ +---- +---- +-------\n {2}Normal +Issuing +<unknown> +Issuing of web$/m);
    assert.match(text, /^CertificateRequest:\n {2}Name: web-1\n[^]*^ {2}Events:\n {4}Type +Reason +Age +From +Message\n.*\n {4}Normal +Approved +<unknown> +Approved of web-1$/m);
    assert.doesNotMatch(text, /of other/);
    // the Certificate's, its Issuer's, its Secret's and its request's
    assert.deepEqual(eventLists.map((o) => o.fieldSelector).sort(), ['involvedObject.name=ca', 'involvedObject.name=web', 'involvedObject.name=web-1', 'involvedObject.name=web-tls']);
  } finally {
    await store.close();
  }
});

test('status shows the request\'s Order as cmctl does: its authorizations, and a failure time only when it failed', async () => {
  const store = openSqliteStore({ path: ':memory:', clock: new FakeClock('2026-01-01T00:00:00Z') });
  try {
    const crt = await store.create(Certificate, {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'web', namespace: 'default' },
      spec: { secretName: 'web-tls', dnsNames: ['web.example.test', '*.web.example.test'], issuerRef: { name: 'le', kind: 'ClusterIssuer' } },
    } as KubeObject);
    const owned = (o: KubeObject) => [{ apiVersion: 'cert-manager.io/v1', kind: o.kind, name: o.metadata.name!, uid: o.metadata.uid!, controller: true }];
    const cr = await store.create(CertificateRequest, {
      apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
      metadata: { name: 'web-1', namespace: 'default', annotations: { [CertificateAnnotation.revision]: '1' }, ownerReferences: owned(crt) },
      spec: { request: '', issuerRef: { name: 'le', kind: 'ClusterIssuer' } },
    } as KubeObject);
    const order = await store.create(Order, {
      apiVersion: 'acme.cert-manager.io/v1', kind: 'Order',
      metadata: { name: 'web-1-1', namespace: 'default', ownerReferences: owned(cr) },
      spec: { request: '', dnsNames: ['web.example.test', '*.web.example.test'], issuerRef: { name: 'le', kind: 'ClusterIssuer' } },
    } as KubeObject);
    const pending = {
      url: 'https://acme.test/order/1', state: 'pending',
      authorizations: [
        { url: 'https://acme.test/authz/1', identifier: 'web.example.test', initialState: 'pending', wildcard: false },
        { url: 'https://acme.test/authz/2', identifier: 'web.example.test', initialState: 'valid', wildcard: true },
      ],
    };
    await store.updateStatus(Order, { ...order, status: pending } as KubeObject);
    const orderLines = async () => {
      const text = await certificateStatus(store, 'default', 'web');
      return text.slice(text.indexOf('Order:\n')).split('\n').filter(Boolean);
    };
    assert.deepEqual(await orderLines(), [
      'Order:',
      '  Name: web-1-1',
      '  State: pending, Reason: ',
      '  Authorizations:',
      '    URL: https://acme.test/authz/1, Identifier: web.example.test, Initial State: pending, Wildcard: false',
      '    URL: https://acme.test/authz/2, Identifier: web.example.test, Initial State: valid, Wildcard: true',
    ]);
    const current = await store.get<KubeObject>(Order, 'default', 'web-1-1');
    await store.updateStatus(Order, { ...current!, status: { state: 'invalid', reason: 'the CA said no', failureTime: '2026-01-01T01:00:00Z' } } as KubeObject);
    assert.deepEqual(await orderLines(), [
      'Order:',
      '  Name: web-1-1',
      '  State: invalid, Reason: the CA said no',
      '  No Authorizations for this Order',
      '  FailureTime: 2026-01-01T01:00:00Z',
    ]);
  } finally {
    await store.close();
  }
});

test('status says which rule holds after a failed renewal-info fetch: the window from the last answer when one is held, else the ordinary renewal time', async () => {
  const store = openSqliteStore({ path: ':memory:', clock: new FakeClock('2026-01-01T00:00:00Z') });
  try {
    const withAri = async (name: string, ari: Record<string, unknown>) => {
      const crt = await store.create(Certificate, {
        apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name, namespace: 'default' },
        spec: { secretName: `${name}-tls`, dnsNames: [`${name}.example.test`], issuerRef: { name: 'ca' } },
      } as KubeObject);
      await store.updateStatus(Certificate, { ...crt, status: { acme: { ari } } } as KubeObject);
    };
    const lastError = 'GET https://ca.test/renewal-info/x: malformed (HTTP 404)';
    await withAri('held', { suggestedWindow: { start: '2025-12-31T00:00:00Z', end: '2025-12-31T01:00:00Z' }, lastError });
    await withAri('none', { lastError });
    const held = await certificateStatus(store, 'default', 'held');
    assert.match(held, /Last Error: GET https:\/\/ca\.test\/renewal-info\/x: malformed \(HTTP 404\) \(the window above, from the CA's last answer, still applies\)/);
    assert.doesNotMatch(held, /ordinary renewal time applies/);
    assert.match(await certificateStatus(store, 'default', 'none'), /Last Error: .* \(the ordinary renewal time applies without a window\)/);
  } finally {
    await store.close();
  }
});

test("status takes the next attempt from the server's own Backoff Event, which knows the server's --backoff-initial; without one it computes it", async () => {
  const store = openSqliteStore({ path: ':memory:', clock: new FakeClock('2026-01-01T00:00:00Z') });
  try {
    const crt = await store.create(Certificate, {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'failing', namespace: 'default' },
      spec: { secretName: 'failing-tls', dnsNames: ['failing.example.test'], issuerRef: { name: 'ca' } },
    } as KubeObject);
    await store.updateStatus(Certificate, { ...crt, status: { lastFailureTime: '2026-01-01T00:00:00Z', failedIssuanceAttempts: 1 } } as KubeObject);
    // without the server's Event: computed with the defaults (1h)
    assert.match(await certificateStatus(store, 'default', 'failing', undefined, new Date('2026-01-01T00:00:05Z')), /Next Attempt: 2026-01-01T01:0\d:\d\dZ/);
    const event = (name: string, at: string, message: string) => store.create(EventType, {
      apiVersion: 'v1', kind: 'Event', metadata: { name, namespace: 'default' },
      involvedObject: { kind: 'Certificate', name: 'failing', namespace: 'default', uid: crt.metadata.uid },
      reason: 'Backoff', message, type: 'Normal', lastTimestamp: at, firstTimestamp: at, count: 1, source: { component: 'cert-manager-certificates-trigger' },
    } as KubeObject);
    // an older failure's Event does not count
    await event('old', '2025-12-31T00:00:00Z', 'Backing off from re-issuance after 1 failed attempt(s): the next attempt will be at 2025-12-31T00:00:30Z');
    await event('now', '2026-01-01T00:00:01Z', 'Backing off from re-issuance after 1 failed attempt(s): the next attempt will be at 2026-01-01T00:00:30Z');
    const text = await certificateStatus(store, 'default', 'failing', undefined, new Date('2026-01-01T00:00:05Z'));
    assert.match(text, /Next Attempt: 2026-01-01T00:00:30Z\n/);
  } finally {
    await store.close();
  }
});
