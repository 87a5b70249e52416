// One suite of the Kubernetes semantics controllers rely on, run against every Store backend
// (the embedded SQLite store here; the cluster backend over HTTPS by the lead). Each test works
// in its own namespace, so backends that share state between tests still isolate them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { KubeObject, Secret } from '../api/meta.ts';
import { Certificate, CertificateRequest, ClusterIssuer, NamespaceType, SecretType } from '../api/resources.ts';
import { isConflict, isGone, isNotFound, StoreError, type Store, type WatchEvent, type WatchOptions } from './store.ts';
import type { ResourceType } from '../api/resources.ts';

export interface ConformanceBackend {
  store: Store;
  cleanup(): Promise<void>;
  /**
   * Compacts history up to the newest revision. Without it, the 410 tests rely on revision 1
   * being long compacted, as it is on any real cluster (etcd compacts every few minutes).
   */
  compact?(): Promise<void>;
}

const suffix = () => randomBytes(4).toString('hex');

function cert(ns: string, name: string, extra: { labels?: Record<string, string>; dnsNames?: string[]; ownerUid?: string; finalizers?: string[] } = {}): KubeObject {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate',
    metadata: {
      name, namespace: ns,
      ...(extra.labels ? { labels: extra.labels } : {}),
      ...(extra.finalizers ? { finalizers: extra.finalizers } : {}),
      ...(extra.ownerUid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name: 'owner', uid: extra.ownerUid }] } : {}),
    },
    spec: { secretName: `${name}-tls`, issuerRef: { name: 'ca' }, dnsNames: extra.dnsNames ?? [`${name}.example.com`] },
  };
}

function statusCode(err: unknown): number | undefined {
  return err instanceof StoreError ? err.code : (err as { code?: number })?.code;
}

async function rejectsWith(p: Promise<unknown>, code: number, what: string) {
  await assert.rejects(p, (err: unknown) => {
    assert.equal(statusCode(err), code, `${what}: expected ${code}, got ${String(err)}`);
    return true;
  });
}

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Recorder {
  events: WatchEvent[];
  errors: Error[];
  stop(): void;
}

function record(store: Store, type: ResourceType, opts: WatchOptions): Recorder {
  const events: WatchEvent[] = [];
  const errors: Error[] = [];
  const w = store.watch(type, opts, (e) => { if (e.type !== 'BOOKMARK') events.push(e); }, (err) => errors.push(err));
  return { events, errors, stop: () => w.stop() };
}

const summary = (es: WatchEvent[]) => es.map((e) => `${e.type} ${e.object.metadata.name}`);

export function runStoreConformance(name: string, makeStore: () => Promise<ConformanceBackend>): void {
  /** A fresh backend and namespace per test; everything created is removed afterwards. */
  async function withStore(fn: (b: ConformanceBackend, ns: string) => Promise<void>) {
    const b = await makeStore();
    const ns = `conf-${suffix()}`;
    try {
      await b.store.create<KubeObject>(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      await fn(b, ns);
    } finally {
      await b.store.delete(NamespaceType, undefined, ns).catch(() => undefined);
      await b.cleanup();
    }
  }

  describe(`store conformance: ${name}`, () => {
    test('create fills system metadata, drops status under a status subresource, returns copies', async () => {
      await withStore(async ({ store }, ns) => {
        const input = { ...cert(ns, 'a'), status: { conditions: [{ type: 'Ready', status: 'True' }] } };
        const created = await store.create<KubeObject>(Certificate, input);
        assert.match(created.metadata.uid!, /^[0-9a-f-]{36}$/);
        assert.match(created.metadata.creationTimestamp!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        assert.match(created.metadata.resourceVersion!, /^[0-9]+$/);
        assert.equal(created.metadata.generation, 1);
        assert.equal(created.status, undefined, 'status on create is ignored for a status subresource');
        assert.equal(input.metadata.uid, undefined, 'the caller object is not mutated');

        const got = (await store.get(Certificate, ns, 'a'))!;
        assert.deepEqual(got, created);
        (got.spec as { secretName: string }).secretName = 'mutated';
        assert.equal(((await store.get(Certificate, ns, 'a'))!.spec as { secretName: string }).secretName, 'a-tls');

        await rejectsWith(store.create<KubeObject>(Certificate, cert(ns, 'a')), 409, 'duplicate create');
        await assert.rejects(store.create<KubeObject>(Certificate, cert(ns, 'a')), (e: unknown) => e instanceof StoreError && e.reason === 'AlreadyExists');
        await rejectsWith(store.create<KubeObject>(Certificate, { ...cert(ns, ''), metadata: { namespace: ns } }), 422, 'create without a name');
        assert.equal(await store.get(Certificate, ns, 'missing'), undefined);
      });
    });

    test('generateName appends five random lowercase alphanumerics', async () => {
      await withStore(async ({ store }, ns) => {
        const names = new Set<string>();
        for (let i = 0; i < 5; i++) {
          const c = await store.create<KubeObject>(Certificate, { ...cert(ns, ''), metadata: { generateName: 'gen-', namespace: ns } });
          assert.match(c.metadata.name!, /^gen-[a-z0-9]{5}$/);
          names.add(c.metadata.name!);
        }
        assert.equal(names.size, 5);
        assert.equal((await store.list(Certificate, { namespace: ns })).items.length, 5);
      });
    });

    test('cluster-scoped objects have no namespace and list across namespaces', async () => {
      await withStore(async ({ store }, ns) => {
        const n = `ci-${suffix()}`;
        const ci = await store.create<KubeObject>(ClusterIssuer, { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: n }, spec: { selfSigned: {} } });
        try {
          assert.equal(ci.metadata.namespace, undefined);
          assert.equal((await store.get(ClusterIssuer, undefined, n))?.metadata.uid, ci.metadata.uid);
          const ns2 = `conf-${suffix()}`;
          await store.create<KubeObject>(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns2 } });
          try {
            await store.create<KubeObject>(Certificate, cert(ns, 'one'));
            await store.create<KubeObject>(Certificate, cert(ns2, 'two'));
            const all = await store.list(Certificate);
            const mine = all.items.filter((c) => c.metadata.namespace === ns || c.metadata.namespace === ns2);
            assert.deepEqual(mine.map((c) => c.metadata.name).sort(), ['one', 'two']);
            assert.deepEqual((await store.list(Certificate, { namespace: ns2 })).items.map((c) => c.metadata.name), ['two']);
            const nsNames = (await store.list(NamespaceType)).items.map((x) => x.metadata.name);
            assert.ok(nsNames.includes(ns) && nsNames.includes(ns2) && nsNames.includes('default'), `namespaces listed: ${nsNames}`);
          } finally {
            await store.delete(NamespaceType, undefined, ns2).catch(() => undefined);
          }
        } finally {
          await store.delete(ClusterIssuer, undefined, n).catch(() => undefined);
        }
      });
    });

    test('update: 409 on a stale resourceVersion, 422 without one on a custom resource (unconditional only for built-in kinds that allow it), 404 when missing', async () => {
      await withStore(async ({ store }, ns) => {
        const v1 = await store.create<KubeObject>(Certificate, cert(ns, 'a'));
        const v2 = await store.update<KubeObject>(Certificate, { ...v1, spec: { ...(v1.spec as object), dnsNames: ['b.example.com'] } });
        assert.notEqual(v2.metadata.resourceVersion, v1.metadata.resourceVersion);
        const stale = { ...v1, spec: { ...(v1.spec as object), dnsNames: ['c.example.com'] } };
        await assert.rejects(store.update<KubeObject>(Certificate, stale), (e: unknown) => isConflict(e));
        // kube-apiserver's customResourceStrategy does not allow unconditional updates: a PUT
        // without resourceVersion would silently overwrite whatever another writer stored
        const { resourceVersion: _rv, ...metaNoRv } = stale.metadata;
        for (const write of [() => store.update<KubeObject>(Certificate, { ...stale, metadata: metaNoRv }),
          () => store.updateStatus<KubeObject>(Certificate, { ...stale, metadata: metaNoRv, status: { x: 1 } })]) {
          await assert.rejects(write(), (e: unknown) => {
            assert.equal(statusCode(e), 422, String(e));
            assert.match(String((e as Error).message), /metadata\.resourceVersion: Invalid value: 0x0: must be specified for an update/);
            return true;
          });
        }
        assert.deepEqual(((await store.get<KubeObject>(Certificate, ns, 'a'))!.spec as { dnsNames: string[] }).dnsNames, ['b.example.com']);
        const v3 = await store.update<KubeObject>(Certificate, { ...stale, metadata: { ...stale.metadata, resourceVersion: v2.metadata.resourceVersion } });
        assert.deepEqual((v3.spec as { dnsNames: string[] }).dnsNames, ['c.example.com']);
        assert.equal(v3.metadata.uid, v1.metadata.uid);
        assert.equal(v3.metadata.creationTimestamp, v1.metadata.creationTimestamp);
        await assert.rejects(store.update<KubeObject>(Certificate, { ...cert(ns, 'missing'), metadata: { ...cert(ns, 'missing').metadata, resourceVersion: '1' } }), (e: unknown) => isNotFound(e));
        await assert.rejects(store.updateStatus<KubeObject>(Certificate, { ...v3, status: { x: 1 }, metadata: { ...v1.metadata } }), (e: unknown) => isConflict(e));
        // a Secret allows it (kube's secretStrategy.AllowUnconditionalUpdate)
        await store.create<Secret>(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: ns }, type: 'Opaque', data: { a: 'MQ==' } });
        const s2 = await store.update<Secret>(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: ns }, type: 'Opaque', data: { a: 'Mg==' } });
        assert.equal(s2.data?.a, 'Mg==');
      });
    });

    test('metadata.generation: kept by custom resources, absent on the built-in kinds whose strategy has none (Secret, Namespace)', async () => {
      await withStore(async ({ store }, ns) => {
        const c = await store.create<KubeObject>(Certificate, cert(ns, 'g'));
        assert.equal(c.metadata.generation, 1);
        const s = await store.create<Secret>(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'g', namespace: ns }, type: 'Opaque', data: { a: 'MQ==' } });
        assert.equal(s.metadata.generation, undefined);
        const s2 = await store.update<Secret>(SecretType, { ...s, data: { a: 'Mg==' } });
        assert.equal(s2.metadata.generation, undefined);
        const n = await store.get<KubeObject>(NamespaceType, undefined, ns);
        assert.equal(n!.metadata.generation, undefined, 'an implicitly created namespace');
        const ns2 = `${ns}-g`;
        try {
          const n2 = await store.create<KubeObject>(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns2 } });
          assert.equal(n2.metadata.generation, undefined);
          const n3 = await store.update<KubeObject>(NamespaceType, { ...n2, metadata: { ...n2.metadata, labels: { a: 'b' } } });
          assert.equal(n3.metadata.generation, undefined);
        } finally {
          await store.delete(NamespaceType, undefined, ns2).catch(() => undefined);
        }
      });
    });

    test('getForUpdate, where a backend has it, sees every acknowledged write as get does, and a write applied but not yet acknowledged', async () => {
      await withStore(async ({ store }, ns) => {
        const readForUpdate = store.getForUpdate?.bind(store);
        if (!readForUpdate) return;
        const v1 = await store.create<KubeObject>(Certificate, cert(ns, 'a'));
        assert.deepEqual(await readForUpdate(Certificate, ns, 'a'), await store.get(Certificate, ns, 'a'));
        const pending = store.update<KubeObject>(Certificate, { ...v1, spec: { ...(v1.spec as object), dnsNames: ['b.example.com'] } });
        const seen = await readForUpdate<KubeObject>(Certificate, ns, 'a');
        const v2 = await pending;
        // a backend that acknowledges as it applies shows v2 too: only never an older object
        assert.equal(seen?.metadata.resourceVersion, v2.metadata.resourceVersion);
        assert.deepEqual(await readForUpdate(Certificate, ns, 'a'), await store.get(Certificate, ns, 'a'));
        await store.delete(Certificate, ns, 'a');
        assert.equal(await readForUpdate(Certificate, ns, 'a'), undefined);
        assert.equal(await readForUpdate(Certificate, ns, 'missing'), undefined);
      });
    });

    test('generation moves with spec only; status goes through the status subresource only', async () => {
      await withStore(async ({ store }, ns) => {
        const c = await store.create<KubeObject>(Certificate, cert(ns, 'a'));
        const labelled = await store.update<KubeObject>(Certificate, { ...c, metadata: { ...c.metadata, labels: { team: 'x' }, annotations: { note: 'y' } } });
        assert.equal(labelled.metadata.generation, 1, 'metadata changes leave generation');
        const withStatus = await store.update<KubeObject>(Certificate, { ...labelled, status: { revision: 7 } });
        assert.equal(withStatus.status, undefined, 'update ignores status');
        assert.equal(withStatus.metadata.resourceVersion, labelled.metadata.resourceVersion, 'an update that only touches status is a no-op');
        const st = await store.updateStatus<KubeObject>(Certificate, { ...labelled, status: { revision: 1 } });
        assert.deepEqual(st.status, { revision: 1 });
        assert.equal(st.metadata.generation, 1, 'status leaves generation');
        assert.deepEqual(st.metadata.labels, { team: 'x' });
        const stMeta = await store.updateStatus<KubeObject>(Certificate, { ...st, metadata: { ...st.metadata, labels: { team: 'changed' } }, spec: { secretName: 'other' } });
        assert.deepEqual(stMeta.metadata.labels, { team: 'x' }, 'updateStatus changes nothing but status');
        assert.equal((stMeta.spec as { secretName: string }).secretName, 'a-tls');
        const specChanged = await store.update<KubeObject>(Certificate, { ...st, spec: { ...(st.spec as object), dnsNames: ['z.example.com'] } });
        assert.equal(specChanged.metadata.generation, 2);
        assert.deepEqual(specChanged.status, { revision: 1 }, 'update keeps the stored status');
        const again = await store.update<KubeObject>(Certificate, { ...specChanged, spec: { ...(specChanged.spec as object), dnsNames: ['y.example.com'] } });
        assert.equal(again.metadata.generation, 3);
      });
    });

    test('a no-op update keeps the resourceVersion and sends no watch event', async () => {
      await withStore(async ({ store }, ns) => {
        const c = await store.create<KubeObject>(Certificate, cert(ns, 'a'));
        const rec = record(store, Certificate, { namespace: ns, resourceVersion: c.metadata.resourceVersion });
        const same = await store.update<KubeObject>(Certificate, structuredClone(c));
        assert.equal(same.metadata.resourceVersion, c.metadata.resourceVersion);
        const sameStatus = await store.updateStatus<KubeObject>(Certificate, structuredClone(c));
        assert.equal(sameStatus.metadata.resourceVersion, c.metadata.resourceVersion);
        await store.create<KubeObject>(Certificate, cert(ns, 'marker'));
        await waitFor('the marker event', () => rec.events.length > 0 || undefined);
        assert.deepEqual(summary(rec.events), ['ADDED marker']);
        rec.stop();
      });
    });

    test('empty labels, annotations, finalizers and ownerReferences are not stored (ObjectMeta omits them), so kubectl diff sees no change', async () => {
      await withStore(async ({ store }, ns) => {
        const empty = { labels: {}, annotations: {}, finalizers: [], ownerReferences: [] };
        const created = await store.create<KubeObject>(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bare', namespace: ns, ...empty } });
        const stored = await store.get<KubeObject>(SecretType, ns, 'bare');
        for (const o of [created, stored!]) for (const f of Object.keys(empty)) assert.equal(f in o.metadata, false, `${f}: ${JSON.stringify(o.metadata)}`);
        // the last label taken away leaves no labels: {} behind
        const labelled = await store.update<KubeObject>(SecretType, { ...stored!, metadata: { ...stored!.metadata, labels: { a: 'b' } } });
        await store.update<KubeObject>(SecretType, { ...labelled, metadata: { ...labelled.metadata, labels: {} } });
        assert.equal('labels' in (await store.get<KubeObject>(SecretType, ns, 'bare'))!.metadata, false);
        const c = await store.create<KubeObject>(Certificate, { ...cert(ns, 'bare'), metadata: { ...cert(ns, 'bare').metadata, ...empty } });
        for (const f of Object.keys(empty)) assert.equal(f in c.metadata, false, f);
      });
    });

    test('Secret stringData is merged into data as base64', async () => {
      await withStore(async ({ store }, ns) => {
        const s = await store.create<Secret>(SecretType, {
          apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: ns },
          data: { a: Buffer.from('A').toString('base64') }, stringData: { b: 'bee' },
        });
        assert.equal(s.stringData, undefined);
        assert.deepEqual(s.data, { a: 'QQ==', b: Buffer.from('bee').toString('base64') });
        assert.equal(s.type, 'Opaque');
        const u = await store.update<Secret>(SecretType, { ...s, stringData: { a: 'new' } });
        assert.equal(Buffer.from(u.data!.a, 'base64').toString(), 'new');
      });
    });

    test('label selectors: equality, sets, existence, combined; a malformed one is 400', async () => {
      await withStore(async ({ store }, ns) => {
        await store.create<KubeObject>(Certificate, cert(ns, 'a', { labels: { env: 'prod', tier: 'web' } }));
        await store.create<KubeObject>(Certificate, cert(ns, 'b', { labels: { env: 'dev', tier: 'web' } }));
        await store.create<KubeObject>(Certificate, cert(ns, 'c', { labels: { env: 'prod' } }));
        await store.create<KubeObject>(Certificate, cert(ns, 'd'));
        const names = async (labelSelector: string) =>
          (await store.list(Certificate, { namespace: ns, labelSelector })).items.map((o) => o.metadata.name).sort().join(',');
        assert.equal(await names('env=prod'), 'a,c');
        assert.equal(await names('env==prod'), 'a,c');
        assert.equal(await names('env!=prod'), 'b,d');
        assert.equal(await names('env in (dev,prod)'), 'a,b,c');
        assert.equal(await names('env notin (prod)'), 'b,d');
        assert.equal(await names('tier'), 'a,b');
        assert.equal(await names('!tier'), 'c,d');
        assert.equal(await names('env=prod,tier=web'), 'a');
        assert.equal(await names('env in (prod), !tier'), 'c');
        assert.equal(await names(''), 'a,b,c,d');
        await rejectsWith(store.list(Certificate, { namespace: ns, labelSelector: 'env in prod' }), 400, 'malformed selector');
        await rejectsWith(store.list(Certificate, { namespace: ns, labelSelector: 'a=b=c' }), 400, 'malformed selector');
      });
    });

    test('field selectors on metadata.name and metadata.namespace; other fields are 400', async () => {
      await withStore(async ({ store }, ns) => {
        await store.create<KubeObject>(Certificate, cert(ns, 'a'));
        await store.create<KubeObject>(Certificate, cert(ns, 'b'));
        const names = async (fieldSelector: string, namespace?: string) =>
          (await store.list(Certificate, { namespace, fieldSelector })).items.map((o) => o.metadata.name).sort().join(',');
        assert.equal(await names('metadata.name=a', ns), 'a');
        assert.equal(await names('metadata.name==b', ns), 'b');
        assert.equal(await names('metadata.name!=a', ns), 'b');
        assert.equal(await names(`metadata.namespace=${ns}`), 'a,b');
        assert.equal(await names(`metadata.namespace=${ns},metadata.name!=b`), 'a');
        await rejectsWith(store.list(Certificate, { namespace: ns, fieldSelector: 'spec.secretName=a-tls' }), 400, 'unsupported field');
      });
    });

    test('pagination: limit and continue walk a consistent snapshot', async () => {
      await withStore(async ({ store }, ns) => {
        for (const n of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) await store.create<KubeObject>(Certificate, cert(ns, n, { labels: { page: 'yes' } }));
        await store.create<KubeObject>(Certificate, cert(ns, 'h'));
        const p1 = await store.list(Certificate, { namespace: ns, limit: 3, labelSelector: 'page=yes' });
        assert.deepEqual(p1.items.map((o) => o.metadata.name), ['a', 'b', 'c']);
        assert.ok(p1.continue);
        // changes after the first page must not show in later pages
        await store.create<KubeObject>(Certificate, cert(ns, 'ee', { labels: { page: 'yes' } }));
        await store.delete(Certificate, ns, 'g');
        await store.update<KubeObject>(Certificate, { ...(await store.get(Certificate, ns, 'f'))!, metadata: { ...(await store.get(Certificate, ns, 'f'))!.metadata, labels: { page: 'no' } } });
        const p2 = await store.list(Certificate, { namespace: ns, limit: 3, labelSelector: 'page=yes', continue: p1.continue });
        assert.deepEqual(p2.items.map((o) => o.metadata.name), ['d', 'e', 'f']);
        assert.equal(p2.resourceVersion, p1.resourceVersion, 'continued pages report the snapshot revision');
        const p3 = await store.list(Certificate, { namespace: ns, limit: 3, labelSelector: 'page=yes', continue: p2.continue });
        assert.deepEqual(p3.items.map((o) => o.metadata.name), ['g']);
        assert.ok(!p3.continue);
        const fresh = await store.list(Certificate, { namespace: ns, labelSelector: 'page=yes' });
        assert.deepEqual(fresh.items.map((o) => o.metadata.name), ['a', 'b', 'c', 'd', 'e', 'ee']);
        assert.ok(Number(fresh.resourceVersion) > Number(p1.resourceVersion));
      });
    });

    test('deleting an owner cascades to its dependents; another live owner keeps one', async () => {
      await withStore(async ({ store }, ns) => {
        const owner = await store.create<KubeObject>(Certificate, cert(ns, 'owner'));
        const other = await store.create<KubeObject>(Certificate, cert(ns, 'other'));
        const ref = (o: KubeObject) => ({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: o.metadata.name!, uid: o.metadata.uid!, controller: o === owner });
        const req = await store.create<KubeObject>(CertificateRequest, {
          apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
          metadata: { name: 'owner-1', namespace: ns, ownerReferences: [ref(owner)] },
          spec: { request: Buffer.from('csr').toString('base64'), issuerRef: { name: 'ca' } },
        });
        // a grandchild: owned by the request
        await store.create<KubeObject>(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'grandchild', namespace: ns, ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', name: req.metadata.name!, uid: req.metadata.uid! }] } });
        await store.create<KubeObject>(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'shared', namespace: ns, ownerReferences: [ref(owner), ref(other)] } });
        await store.create<KubeObject>(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'held', namespace: ns, finalizers: ['example.com/hold'], ownerReferences: [ref(owner)] } });
        await store.create<KubeObject>(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'unrelated', namespace: ns } });

        const deleted = await store.delete(Certificate, ns, 'owner');
        assert.equal(deleted?.metadata.uid, owner.metadata.uid);
        await waitFor('the request to go', async () => (await store.get(CertificateRequest, ns, 'owner-1')) === undefined || undefined);
        await waitFor('the grandchild to go', async () => (await store.get(SecretType, ns, 'grandchild')) === undefined || undefined);
        const held = await waitFor('the held secret to be marked', async () => {
          const s = await store.get(SecretType, ns, 'held');
          return s?.metadata.deletionTimestamp ? s : undefined;
        });
        assert.deepEqual(held.metadata.finalizers, ['example.com/hold']);
        assert.ok(await store.get(SecretType, ns, 'shared'), 'a dependent with a live owner stays');
        assert.ok(await store.get(SecretType, ns, 'unrelated'));
        await store.update<KubeObject>(SecretType, { ...held, metadata: { ...held.metadata, finalizers: [] } });
        assert.equal(await store.get(SecretType, ns, 'held'), undefined);
      });
    });

    test('an object whose owners are all gone is collected; a reference to an owner that is gone is dropped beside a live one (the garbage collector)', async () => {
      await withStore(async ({ store }, ns) => {
        // an owner deleted while a controller, working from its cache, made a dependent for it
        const owner = await store.create<KubeObject>(Certificate, cert(ns, 'owner'));
        await store.delete(Certificate, ns, 'owner');
        const goneRef = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'owner', uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true };
        await store.create<KubeObject>(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'orphan', namespace: ns, ownerReferences: [goneRef] } });
        await waitFor('the orphan to be collected', async () => (await store.get(SecretType, ns, 'orphan')) === undefined || undefined);

        const live = await store.create<KubeObject>(Certificate, cert(ns, 'live'));
        const liveRef = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'live', uid: live.metadata.uid! };
        await store.create<KubeObject>(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'half', namespace: ns, ownerReferences: [{ ...goneRef, controller: false }, liveRef] } });
        const half = await waitFor('the dangling reference to be dropped', async () => {
          const s = await store.get(SecretType, ns, 'half');
          return s?.metadata.ownerReferences?.length === 1 ? s : undefined;
        });
        assert.deepEqual(half.metadata.ownerReferences?.map((r) => r.uid), [live.metadata.uid]);

        // an update that points an object at an owner that is gone
        const later = await store.create<KubeObject>(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'later', namespace: ns } });
        await store.update<KubeObject>(SecretType, { ...later, metadata: { ...later.metadata, ownerReferences: [goneRef] } });
        await waitFor('the re-pointed object to be collected', async () => (await store.get(SecretType, ns, 'later')) === undefined || undefined);

        // an owner of a kind this server does not serve cannot be looked up: its dependent stays, as on a cluster
        await store.create<KubeObject>(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'foreign', namespace: ns, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: '8a5ef1c6-0000-4000-8000-000000000001' }] } });
        // and it keeps the dependent when the dependent's other, served owner is deleted
        const co = await store.create<KubeObject>(Certificate, cert(ns, 'co-owner'));
        const deploymentRef = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: '8a5ef1c6-0000-4000-8000-000000000001' };
        await store.create<KubeObject>(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'shared-foreign', namespace: ns, ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'co-owner', uid: co.metadata.uid! }, deploymentRef] } });
        await store.delete(Certificate, ns, 'co-owner');
        const kept = await waitFor('the deleted owner\'s reference to be dropped', async () => {
          const s = await store.get(SecretType, ns, 'shared-foreign');
          return s === undefined || s.metadata.ownerReferences?.length === 1 ? { s } : undefined;
        });
        assert.deepEqual(kept.s?.metadata.ownerReferences, [deploymentRef], 'the dependent stays, owned by the Deployment alone');
        await new Promise((r) => setTimeout(r, 200));
        assert.ok(await store.get(SecretType, ns, 'foreign'));
      });
    });

    test('finalizers: delete marks once, removing the last finalizer removes the object', async () => {
      await withStore(async ({ store }, ns) => {
        const c = await store.create<KubeObject>(Certificate, cert(ns, 'a', { finalizers: ['example.com/x', 'example.com/y'] }));
        const rec = record(store, Certificate, { namespace: ns, resourceVersion: c.metadata.resourceVersion });
        const marked = (await store.delete(Certificate, ns, 'a'))!;
        assert.ok(marked.metadata.deletionTimestamp);
        const got = (await store.get(Certificate, ns, 'a'))!;
        assert.equal(got.metadata.deletionTimestamp, marked.metadata.deletionTimestamp);
        assert.ok(got.metadata.generation! >= 1);
        const again = (await store.delete(Certificate, ns, 'a'))!;
        assert.equal(again.metadata.deletionTimestamp, marked.metadata.deletionTimestamp, 'deletionTimestamp is set once');
        await rejectsWith(store.update<KubeObject>(Certificate, { ...got, metadata: { ...got.metadata, finalizers: ['example.com/x', 'example.com/y', 'example.com/z'] } }), 422, 'adding a finalizer while deleting');
        const one = await store.update<KubeObject>(Certificate, { ...got, metadata: { ...got.metadata, finalizers: ['example.com/y'], deletionTimestamp: undefined } });
        assert.equal(one.metadata.deletionTimestamp, marked.metadata.deletionTimestamp, 'an update cannot clear deletionTimestamp');
        await store.update<KubeObject>(Certificate, { ...one, metadata: { ...one.metadata, finalizers: [] } });
        assert.equal(await store.get(Certificate, ns, 'a'), undefined);
        await waitFor('the DELETED event', () => rec.events.some((e) => e.type === 'DELETED') || undefined);
        assert.deepEqual(rec.events.map((e) => e.type), ['MODIFIED', 'MODIFIED', 'DELETED']);
        assert.ok(rec.events[0].object.metadata.deletionTimestamp);
        rec.stop();
        await assert.rejects(store.delete(Certificate, ns, 'a'), (e: unknown) => isNotFound(e));
      });
    });

    test('delete preconditions on uid and resourceVersion', async () => {
      await withStore(async ({ store }, ns) => {
        const c = await store.create<KubeObject>(Certificate, cert(ns, 'a'));
        await assert.rejects(store.delete(Certificate, ns, 'a', { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } }), (e: unknown) => isConflict(e));
        const u = await store.update<KubeObject>(Certificate, { ...c, spec: { ...(c.spec as object), dnsNames: ['x.example.com'] } });
        await assert.rejects(store.delete(Certificate, ns, 'a', { preconditions: { resourceVersion: c.metadata.resourceVersion } }), (e: unknown) => isConflict(e));
        await store.delete(Certificate, ns, 'a', { preconditions: { uid: c.metadata.uid, resourceVersion: u.metadata.resourceVersion } });
        assert.equal(await store.get(Certificate, ns, 'a'), undefined);
      });
    });

    test('watch: resume from a resourceVersion, initial state from 0, from now, asynchronous delivery', async () => {
      await withStore(async ({ store }, ns) => {
        const start = await store.create<KubeObject>(Certificate, cert(ns, 'start'));
        const a = await store.create<KubeObject>(Certificate, cert(ns, 'a'));
        await store.update<KubeObject>(Certificate, { ...a, spec: { ...(a.spec as object), dnsNames: ['a2.example.com'] } });
        await store.create<KubeObject>(Certificate, cert(ns, 'b'));
        await store.delete(Certificate, ns, 'a');

        const resumed = record(store, Certificate, { namespace: ns, resourceVersion: start.metadata.resourceVersion });
        const initial = record(store, Certificate, { namespace: ns, resourceVersion: '0' });
        const live = record(store, Certificate, { namespace: ns });
        await waitFor('the replay', () => resumed.events.length >= 4 || undefined);
        assert.deepEqual(summary(resumed.events), ['ADDED a', 'MODIFIED a', 'ADDED b', 'DELETED a']);
        const revs = resumed.events.map((e) => Number(e.object.metadata.resourceVersion));
        assert.deepEqual(revs, [...revs].sort((x, y) => x - y), 'events come in revision order');
        await waitFor('the initial state', () => initial.events.length >= 2 || undefined);
        assert.deepEqual(summary(initial.events).sort(), ['ADDED b', 'ADDED start']);

        const p = store.create<KubeObject>(Certificate, cert(ns, 'c'));
        assert.equal(live.events.length, 0, 'the handler does not run inside the write');
        const c = await p;
        await waitFor('the live event', () => live.events.length >= 1 || undefined);
        assert.deepEqual(summary(live.events), ['ADDED c']);
        assert.equal(live.events[0].object.metadata.resourceVersion, c.metadata.resourceVersion);
        await waitFor('the others to catch up', () => (resumed.events.length >= 5 && initial.events.length >= 3) || undefined);
        assert.deepEqual(summary(resumed.events).slice(4), ['ADDED c']);
        assert.deepEqual(summary(initial.events).slice(2), ['ADDED c']);
        // each watcher gets its own copy
        live.events[0].object.metadata.name = 'mutated';
        assert.equal(resumed.events[4].object.metadata.name, 'c');
        for (const r of [resumed, initial, live]) r.stop();
      });
    });

    test('watch with a selector: leaving it is DELETED, entering it is ADDED', async () => {
      await withStore(async ({ store }, ns) => {
        const c = await store.create<KubeObject>(Certificate, cert(ns, 'a', { labels: { watch: 'yes' } }));
        const rec = record(store, Certificate, { namespace: ns, labelSelector: 'watch=yes', resourceVersion: c.metadata.resourceVersion });
        const out = await store.update<KubeObject>(Certificate, { ...c, metadata: { ...c.metadata, labels: { watch: 'no' } } });
        const outAgain = await store.update<KubeObject>(Certificate, { ...out, spec: { ...(out.spec as object), dnsNames: ['q.example.com'] } });
        const back = await store.update<KubeObject>(Certificate, { ...outAgain, metadata: { ...outAgain.metadata, labels: { watch: 'yes' } } });
        await store.delete(Certificate, ns, 'a');
        await waitFor('three events', () => rec.events.length >= 3 || undefined);
        assert.deepEqual(summary(rec.events), ['DELETED a', 'ADDED a', 'DELETED a']);
        assert.equal(rec.events[0].object.metadata.resourceVersion, out.metadata.resourceVersion);
        assert.equal(rec.events[1].object.metadata.resourceVersion, back.metadata.resourceVersion);
        rec.stop();
      });
    });

    test('watch and continue from a compacted revision fail with 410 Gone', async () => {
      await withStore(async (b, ns) => {
        const { store } = b;
        const first = await store.create<KubeObject>(Certificate, cert(ns, 'a'));
        for (const n of ['b', 'c', 'd']) await store.create<KubeObject>(Certificate, cert(ns, n));
        const page = await store.list(Certificate, { namespace: ns, limit: 1 });
        let old = '1';
        if (b.compact) {
          for (let i = 0; i < 3; i++) {
            const cur = (await store.get<KubeObject>(Certificate, ns, 'a'))!;
            await store.update<KubeObject>(Certificate, { ...cur, metadata: { ...cur.metadata, annotations: { i: String(i) } } });
          }
          await b.compact();
          old = first.metadata.resourceVersion!;
          await assert.rejects(store.list(Certificate, { namespace: ns, limit: 1, continue: page.continue }), (e: unknown) => isGone(e));
        }
        const rec = record(store, Certificate, { namespace: ns, resourceVersion: old });
        await waitFor('the 410', () => rec.errors.length > 0 || undefined);
        assert.ok(isGone(rec.errors[0]) || statusCode(rec.errors[0]) === 410, `got ${rec.errors[0]}`);
        rec.stop();
        // a fresh list and watch still work
        const now = await store.list(Certificate, { namespace: ns });
        assert.equal(now.items.length, 4);
        const after = record(store, Certificate, { namespace: ns, resourceVersion: now.resourceVersion });
        await store.delete(Certificate, ns, 'b');
        await waitFor('the event after compaction', () => after.events.length > 0 || undefined);
        assert.deepEqual(summary(after.events), ['DELETED b']);
        after.stop();
      });
    });

    test('patch: merge, json, apply, and the status subresource', async () => {
      await withStore(async ({ store }, ns) => {
        const c = await store.create<KubeObject>(Certificate, cert(ns, 'a', { labels: { keep: 'y', drop: 'y' } }));
        const merged = await store.patch(Certificate, ns, 'a', 'merge', { metadata: { labels: { drop: null, add: 'y' } }, spec: { dnsNames: ['m.example.com'] }, status: { ignored: true } });
        assert.deepEqual(merged.metadata.labels, { keep: 'y', add: 'y' });
        assert.deepEqual((merged.spec as { dnsNames: string[] }).dnsNames, ['m.example.com']);
        assert.equal((merged.spec as { secretName: string }).secretName, 'a-tls');
        assert.equal(merged.metadata.generation, 2);
        assert.equal(merged.status, undefined, 'a patch of the main resource ignores status');

        const jp = await store.patch(Certificate, ns, 'a', 'json', [
          { op: 'test', path: '/spec/secretName', value: 'a-tls' },
          { op: 'add', path: '/spec/dnsNames/-', value: 'n.example.com' },
          { op: 'replace', path: '/spec/secretName', value: 'b-tls' },
          { op: 'remove', path: '/metadata/labels/keep' },
        ]);
        assert.deepEqual((jp.spec as { dnsNames: string[] }).dnsNames, ['m.example.com', 'n.example.com']);
        assert.equal((jp.spec as { secretName: string }).secretName, 'b-tls');
        assert.deepEqual(jp.metadata.labels, { add: 'y' });
        await rejectsWith(store.patch(Certificate, ns, 'a', 'json', [{ op: 'test', path: '/spec/secretName', value: 'nope' }]), 422, 'failed test op');
        await assert.rejects(store.patch(Certificate, ns, 'a', 'json', [{ op: 'frobnicate', path: '/x' }]), (e: unknown) => [400, 422].includes(statusCode(e)!));
        await assert.rejects(store.patch(Certificate, ns, 'a', 'merge', { metadata: { resourceVersion: c.metadata.resourceVersion }, spec: { secretName: 'z' } }), (e: unknown) => isConflict(e));

        const st = await store.patch(Certificate, ns, 'a', 'merge', { status: { revision: 3 }, spec: { secretName: 'ignored' } }, { subresource: 'status' });
        assert.deepEqual(st.status, { revision: 3 });
        assert.equal((st.spec as { secretName: string }).secretName, 'b-tls');
        assert.equal(st.metadata.generation, jp.metadata.generation);

        const applied = await store.patch(Certificate, ns, 'fresh', 'apply', cert(ns, 'fresh', { labels: { via: 'apply' } }), { fieldManager: 'conformance', force: true });
        assert.equal(applied.metadata.generation, 1);
        assert.deepEqual(applied.metadata.labels, { via: 'apply' });
        const reapplied = await store.patch(Certificate, ns, 'fresh', 'apply', { ...cert(ns, 'fresh', { labels: { via: 'apply' } }), spec: { ...(cert(ns, 'fresh').spec as object), secretName: 'applied-tls' } }, { fieldManager: 'conformance', force: true });
        assert.equal((reapplied.spec as { secretName: string }).secretName, 'applied-tls');
        assert.equal(reapplied.metadata.uid, applied.metadata.uid);
        assert.equal(reapplied.metadata.generation, 2);
        await assert.rejects(store.patch(Certificate, ns, 'nothing', 'merge', { spec: {} }), (e: unknown) => isNotFound(e));
      });
    });
  });
}
