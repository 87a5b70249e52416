// applyManifests (certsmith apply, server --apply): Namespaces go first and an object in a
// namespace that neither exists nor comes with the apply is refused, with nothing stored;
// unknown fields are refused (Strict, the default), or dropped with a warning (Warn).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { withAdmission } from '../server/admission.ts';
import { Issuer, NamespaceType, type ResourceType } from '../api/resources.ts';
import type { KubeObject } from '../api/meta.ts';
import { StoreError, type ListOptions, type Store } from '../store/store.ts';
import { applyConcurrency, applyManifests } from './apply-manifests.ts';

const issuer = (ns: string, spec: Record<string, unknown> = { selfSigned: {} }) => ({ file: 'm.yaml', obj: { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'i', namespace: ns }, spec } as KubeObject });
const namespace = (name: string) => ({ file: 'm.yaml', obj: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } as KubeObject });

/** A test on a fresh in-memory store with admission in front, closed afterwards. */
const withStore = (fn: (store: Store) => Promise<void>) => async () => {
  const store = withAdmission(openSqliteStore({ path: ':memory:' }));
  try {
    await fn(store);
  } finally {
    await store.close();
  }
};

test('an object in a namespace that does not exist is refused and nothing is stored', withStore(async (store) => {
  const report = await applyManifests(store, [issuer('default'), issuer('team-a')], { defaultNamespace: 'default' });
  assert.deepEqual(report.errors, ['error: m.yaml: Issuer team-a/i: namespaces "team-a" not found']);
  assert.equal(await store.get(Issuer, 'default', 'i'), undefined);
  assert.equal(await store.get(NamespaceType, undefined, 'team-a'), undefined);
}));

test('Namespaces are applied before the objects in them, wherever they are in the manifests', withStore(async (store) => {
  const report = await applyManifests(store, [issuer('team-a'), namespace('team-a'), issuer('cert-manager')], { defaultNamespace: 'default' });
  assert.deepEqual(report.errors, []);
  assert.deepEqual(report.applied, ['namespace/team-a created', 'issuer.cert-manager.io/i created', 'issuer.cert-manager.io/i created']);
  assert.ok(await store.get(Issuer, 'team-a', 'i'));
}));

test('unknown fields: refused by default, dropped with a warning under Warn', withStore(async (store) => {
  const typo = issuer('default', { selfSigned: {}, selfsigned: {} });
  const strict = await applyManifests(store, [typo], { defaultNamespace: 'default' });
  assert.deepEqual(strict.errors, ['error: m.yaml: Issuer default/i: strict decoding error: unknown field "spec.selfsigned"']);
  const warn = await applyManifests(store, [typo], { defaultNamespace: 'default', fieldValidation: 'Warn' });
  assert.deepEqual(warn.errors, []);
  assert.deepEqual(warn.warnings, ['Warning: unknown field "spec.selfsigned"']);
  assert.deepEqual((await store.get<KubeObject>(Issuer, 'default', 'i'))!.spec, { selfSigned: {} });
}));

/** The store with a delay on each request, counting requests by method and the most in flight at once. */
function slowCounting(store: Store) {
  const counts = { get: 0, list: 0, create: 0, update: 0, inFlight: 0, maxInFlight: 0 };
  const slow = <T>(method: 'get' | 'list' | 'create' | 'update', call: () => Promise<T>): Promise<T> => {
    counts[method]++;
    counts.maxInFlight = Math.max(counts.maxInFlight, ++counts.inFlight);
    return new Promise<void>((r) => setTimeout(r, 2)).then(call).finally(() => counts.inFlight--);
  };
  const wrapped: Store = {
    ...store,
    get: (t, ns, n) => slow('get', () => store.get(t, ns, n)),
    list: (t, o) => slow('list', () => store.list(t, o)),
    create: (t, o, w) => slow('create', () => store.create(t, o, w)),
    update: (t, o, w) => slow('update', () => store.update(t, o, w)),
    close: () => store.close(),
  };
  return { store: wrapped, counts };
}

const named = (name: string, ns = 'default', spec: Record<string, unknown> = { selfSigned: {} }) =>
  ({ file: 'm.yaml', obj: { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name, namespace: ns }, spec } as KubeObject });

test('many documents are checked and written several at a time (bounded), reported in manifest order', async () => {
  const backend = withAdmission(openSqliteStore({ path: ':memory:' }));
  try {
    const { store, counts } = slowCounting(backend);
    const manifests = Array.from({ length: 60 }, (_, i) => named(`i${i}`));
    const report = await applyManifests(store, manifests, { defaultNamespace: 'default' });
    assert.deepEqual(report.errors, []);
    assert.deepEqual(report.applied, manifests.map((m) => `issuer.cert-manager.io/${m.obj.metadata.name} created`));
    assert.ok(counts.maxInFlight > 1, `requests in flight at once: ${counts.maxInFlight}`);
    assert.ok(counts.maxInFlight <= applyConcurrency, `requests in flight at once: ${counts.maxInFlight} > ${applyConcurrency}`);
    // a new object costs its dry run and its write; no lookup first
    assert.deepEqual({ get: counts.get, create: counts.create }, { get: 0, create: 120 });

    const again = await applyManifests(store, manifests, { defaultNamespace: 'default' });
    assert.deepEqual(again.applied, manifests.map((m) => `issuer.cert-manager.io/${m.obj.metadata.name} unchanged`));
  } finally {
    await backend.close();
  }
});

test('refused documents among many are each reported, in manifest order, and nothing is stored', withStore(async (store) => {
  const manifests = Array.from({ length: 40 }, (_, i) => named(`i${i}`, 'default', i === 7 || i === 31 ? { ca: {} } : { selfSigned: {} }));
  const report = await applyManifests(store, manifests, { defaultNamespace: 'default' });
  assert.equal(report.applied.length, 0);
  assert.equal(report.errors.length, 2, report.errors.join('\n'));
  assert.match(report.errors[0], /^error: m\.yaml: Issuer default\/i7: spec\.ca\.secretName: /);
  assert.match(report.errors[1], /^error: m\.yaml: Issuer default\/i31: spec\.ca\.secretName: /);
  assert.equal((await store.list(Issuer)).items.length, 0);
}));

test('a Namespace is stored before any object in it is written, with writes in flight', async () => {
  const backend = withAdmission(openSqliteStore({ path: ':memory:' }));
  try {
    const { store } = slowCounting(backend);
    const manifests = [...Array.from({ length: 30 }, (_, i) => named(`i${i}`, 'team-b')), namespace('team-b')];
    const report = await applyManifests(store, manifests, { defaultNamespace: 'default' });
    assert.deepEqual(report.errors, []);
    assert.equal(report.applied[0], 'namespace/team-b created');
    assert.equal((await backend.list(Issuer, { namespace: 'team-b' })).items.length, 30);
  } finally {
    await backend.close();
  }
});

test('an object a controller writes between the lookup and the dry run is looked up again, not refused', async () => {
  const backend = withAdmission(openSqliteStore({ path: ':memory:' }));
  try {
    await applyManifests(backend, [named('busy')], { defaultNamespace: 'default' });
    let conflicts = 0;
    const store: Store = {
      ...backend,
      get: (t, ns, n) => backend.get(t, ns, n),
      list: (t, o) => backend.list(t, o),
      create: (t, o, w) => backend.create(t, o, w),
      update: (t, o, w) => {
        // the first two dry runs lose the race with a controller's write
        if (w?.dryRun && conflicts < 2) {
          conflicts++;
          return Promise.reject(new StoreError('Conflict', 'the object has been modified; please apply your changes to the latest version and try again'));
        }
        return backend.update(t, o, w);
      },
      close: () => backend.close(),
    };
    const report = await applyManifests(store, [named('busy')], { defaultNamespace: 'default' });
    assert.deepEqual(report.errors, []);
    assert.deepEqual(report.applied, ['issuer.cert-manager.io/busy unchanged']);
    assert.equal(conflicts, 2);
  } finally {
    await backend.close();
  }
});

test('re-applying many stored objects lists their namespace once, then costs one dry-run update each', async () => {
  const backend = withAdmission(openSqliteStore({ path: ':memory:' }));
  try {
    const manifests = Array.from({ length: 60 }, (_, i) => named(`i${i}`));
    await applyManifests(backend, manifests, { defaultNamespace: 'default' });
    const { store, counts } = slowCounting(backend);
    // one of them changed in the manifest since
    const changed = [...manifests];
    changed[5] = named('i5', 'default', { ca: { secretName: 'ca' } });
    const report = await applyManifests(store, changed, { defaultNamespace: 'default' });
    assert.deepEqual(report.errors, []);
    assert.deepEqual(report.applied, changed.map((m, i) => `issuer.cert-manager.io/${m.obj.metadata.name} ${i === 5 ? 'configured' : 'unchanged'}`));
    // before: a dry-run create (AlreadyExists), a get and a dry-run update each
    assert.deepEqual({ list: counts.list, get: counts.get, create: counts.create, update: counts.update }, { list: 1, get: 0, create: 0, update: 61 });
    assert.deepEqual((await backend.get<KubeObject>(Issuer, 'default', 'i5'))!.spec, { ca: { secretName: 'ca' } });
  } finally {
    await backend.close();
  }
});

test('a namespace holding far more objects of the kind than the manifest names is not read whole', async () => {
  const backend = withAdmission(openSqliteStore({ path: ':memory:' }));
  try {
    const manifests = Array.from({ length: 60 }, (_, i) => named(`i${i}`));
    await applyManifests(backend, [...manifests, ...Array.from({ length: 1000 }, (_, i) => named(`other${i}`))], { defaultNamespace: 'default' });
    const { store, counts } = slowCounting(backend);
    const report = await applyManifests(store, manifests, { defaultNamespace: 'default' });
    assert.deepEqual(report.applied, manifests.map((m) => `issuer.cert-manager.io/${m.obj.metadata.name} unchanged`));
    // 60 × 4 + 500 objects at most are read (two pages of 500), then each is looked up alone
    assert.equal(counts.list, 2);
    assert.equal(counts.get, 60);
  } finally {
    await backend.close();
  }
});

test('a list that is refused, or an object created after it, is looked up one at a time', async () => {
  const backend = withAdmission(openSqliteStore({ path: ':memory:' }));
  try {
    const manifests = Array.from({ length: 60 }, (_, i) => named(`i${i}`));
    await applyManifests(backend, manifests.slice(1), { defaultNamespace: 'default' });
    const refused: Store = { ...backend, list: () => Promise.reject(new StoreError('Forbidden', 'issuers.cert-manager.io is forbidden: cannot list resource "issuers"')), close: () => backend.close() };
    const report = await applyManifests(refused, manifests, { defaultNamespace: 'default' });
    assert.deepEqual(report.errors, []);
    assert.deepEqual(report.applied, manifests.map((m, i) => `issuer.cert-manager.io/${m.obj.metadata.name} ${i === 0 ? 'created' : 'unchanged'}`));

    // i60 is created by someone else right after the list: its dry-run create answers AlreadyExists
    const late = named('i60');
    const racing: Store = {
      ...backend,
      list: async <T extends KubeObject>(t: ResourceType, o?: ListOptions) => {
        const page = await backend.list<T>(t, o);
        await backend.create(Issuer, late.obj);
        return page;
      },
      close: () => backend.close(),
    };
    const again = await applyManifests(racing, [...manifests, late], { defaultNamespace: 'default' });
    assert.deepEqual(again.errors, []);
    // found and updated, not refused: its one change is the last-applied record the other writer left out
    assert.equal(again.applied.at(-1), 'issuer.cert-manager.io/i60 configured');
    assert.ok((await backend.get<KubeObject>(Issuer, 'default', 'i60'))!.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration']);
  } finally {
    await backend.close();
  }
});

test('kubectl\'s last-applied record is written; re-applying is unchanged; what the manifest drops goes, what others set stays', withStore(async (store) => {
  const doc = (labels: Record<string, string>, annotations?: Record<string, string>) => ({
    file: 'm.yaml',
    obj: { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'i', labels, ...(annotations ? { annotations } : {}) }, spec: { selfSigned: {} } } as KubeObject,
  });
  const first = await applyManifests(store, [doc({ team: 'a', tier: 'web' }, { note: 'x' })], { defaultNamespace: 'default' });
  assert.deepEqual(first.applied, ['issuer.cert-manager.io/i created']);
  const stored = (await store.get<KubeObject>(Issuer, 'default', 'i'))!;
  assert.equal(stored.metadata.annotations!['kubectl.kubernetes.io/last-applied-configuration'],
    '{"apiVersion":"cert-manager.io/v1","kind":"Issuer","metadata":{"annotations":{"note":"x"},"labels":{"team":"a","tier":"web"},"name":"i","namespace":"default"},"spec":{"selfSigned":{}}}\n');

  const again = await applyManifests(store, [doc({ team: 'a', tier: 'web' }, { note: 'x' })], { defaultNamespace: 'default' });
  assert.deepEqual(again.applied, ['issuer.cert-manager.io/i unchanged']);

  // someone labels and annotates it (kubectl label/annotate); the manifest then drops tier and note
  await store.update(Issuer, { ...stored, metadata: { ...stored.metadata, labels: { ...stored.metadata.labels, owner: 'ops' }, annotations: { ...stored.metadata.annotations, ticket: '42' } } });
  const third = await applyManifests(store, [doc({ team: 'a' })], { defaultNamespace: 'default' });
  assert.deepEqual(third.applied, ['issuer.cert-manager.io/i configured']);
  const after = (await store.get<KubeObject>(Issuer, 'default', 'i'))!;
  assert.deepEqual(after.metadata.labels, { team: 'a', owner: 'ops' });
  const { ['kubectl.kubernetes.io/last-applied-configuration']: record, ...others } = after.metadata.annotations!;
  assert.deepEqual(others, { ticket: '42' });
  assert.equal(JSON.parse(record).metadata.labels.tier, undefined);
}));

test('an invalid object in a namespace this apply creates is refused before anything, the Namespace included, is stored', withStore(async (store) => {
  const bad = { ...issuer('team-a', {}), obj: { ...issuer('team-a', {}).obj, metadata: { name: 'bad', namespace: 'team-a' } } };
  const report = await applyManifests(store, [namespace('team-a'), issuer('team-a'), bad], { defaultNamespace: 'default' });
  assert.equal(report.errors.length, 1, report.errors.join('\n'));
  assert.match(report.errors[0], /^error: m\.yaml: Issuer team-a\/bad: spec: Required value: /);
  assert.deepEqual(report.applied, []);
  assert.equal(await store.get(NamespaceType, undefined, 'team-a'), undefined);
  assert.equal(await store.get(Issuer, 'team-a', 'i'), undefined);
}));

test('the same object twice in one apply is refused, naming both documents, and nothing is stored', withStore(async (store) => {
  const second = { file: 'other.yaml', obj: issuer('default', { ca: { secretName: 'ca' } }).obj };
  const report = await applyManifests(store, [namespace('team-b'), issuer('default'), second], { defaultNamespace: 'default' });
  assert.deepEqual(report.errors, ['error: other.yaml: Issuer default/i: also in m.yaml: one apply holds each object once']);
  assert.deepEqual(report.applied, []);
  assert.equal(await store.get(Issuer, 'default', 'i'), undefined);
  assert.equal(await store.get(NamespaceType, undefined, 'team-b'), undefined);
}));

test('with -n, a document naming another namespace is refused, as kubectl refuses it, and nothing is stored', withStore(async (store) => {
  const report = await applyManifests(store, [issuer('default'), issuer('kube-public')], { defaultNamespace: 'default', enforceNamespace: true });
  assert.deepEqual(report.errors, ['error: m.yaml: Issuer kube-public/i: the namespace from the provided object "kube-public" does not match the namespace "default". You must pass \'--namespace=kube-public\' to perform this operation.']);
  assert.equal(await store.get(Issuer, 'default', 'i'), undefined);
  assert.deepEqual((await applyManifests(store, [issuer('kube-public')], { defaultNamespace: 'default' })).errors, [], 'without -n, it goes where it says');
}));

test('Secrets and issuers are stored before the Certificates that use them, wherever they are in the manifests (an imported Secret is adopted, not re-issued)', async () => {
  const backend = withAdmission(openSqliteStore({ path: ':memory:' }));
  try {
    const order: string[] = [];
    const store = new Proxy(backend, {
      get(target, prop, receiver) {
        if (prop === 'create') return (type: ResourceType, obj: KubeObject, o?: { dryRun?: boolean }) => { if (!o?.dryRun) order.push(type.kind); return target.create(type, obj, o); };
        return Reflect.get(target, prop, receiver);
      },
    }) as Store;
    const certificate = { file: 'm.yaml', obj: { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'web', namespace: 'default' }, spec: { secretName: 'web-tls', dnsNames: ['web.example.test'], issuerRef: { name: 'i' } } } as KubeObject };
    const secret = { file: 'm.yaml', obj: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'web-tls', namespace: 'default' }, type: 'Opaque' } as KubeObject };
    const report = await applyManifests(store, [certificate, secret, issuer('default')], { defaultNamespace: 'default' });
    assert.deepEqual(report.errors, []);
    assert.deepEqual([...order].sort(), ['Certificate', 'Issuer', 'Secret'], order.join(','));
    assert.equal(order.at(-1), 'Certificate', order.join(','));
  } finally {
    await backend.close();
  }
});

test('an exported document (resourceVersion set) is created, as kubectl clears the resourceVersion of what it creates', async () => {
  const backend = withAdmission(openSqliteStore({ path: ':memory:' }));
  try {
    // the API server refuses a create that carries a resourceVersion, as kube-apiserver does
    const store = new Proxy(backend, {
      get(target, prop, receiver) {
        if (prop === 'create') {
          return (type: ResourceType, obj: KubeObject, o?: unknown) => {
            if (obj.metadata.resourceVersion) throw new StoreError('BadRequest', 'resourceVersion should not be set on objects to be created');
            return target.create(type, obj, o as never);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    }) as Store;
    const exported = { file: 'm.yaml', obj: { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'i', namespace: 'team-x', resourceVersion: '4711', uid: 'old-uid' }, spec: { selfSigned: {} } } as KubeObject };
    const ns = { file: 'm.yaml', obj: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-x', resourceVersion: '12' } } as KubeObject };
    const report = await applyManifests(store, [ns, exported], { defaultNamespace: 'default' });
    assert.deepEqual(report.errors, []);
    assert.deepEqual(report.applied, ['namespace/team-x created', 'issuer.cert-manager.io/i created']);
  } finally {
    await backend.close();
  }
});

// kubectl apply sends the manifest's resourceVersion with its patch, so an edited export of an
// object someone changed since is refused (the object has been modified) instead of silently
// undoing their change; a manifest without one applies over whatever is there.
test('a manifest carrying a stale resourceVersion is refused as a conflict, as kubectl apply refuses it', async () => {
  const store = withAdmission(openSqliteStore({ path: ':memory:' }));
  try {
    const doc = (spec: Record<string, unknown>, resourceVersion?: string) => ({ file: 'm.yaml', obj: { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'i', namespace: 'default', ...(resourceVersion ? { resourceVersion } : {}) }, spec } as KubeObject });
    await applyManifests(store, [doc({ selfSigned: {} })], { defaultNamespace: 'default' });
    const exported = (await store.get(Issuer, 'default', 'i'))!;
    // someone else changes it
    await store.update(Issuer, { ...exported, metadata: { ...exported.metadata, labels: { team: 'x' } } });
    const stale = await applyManifests(store, [doc({ selfSigned: { crlDistributionPoints: ['http://crl.test'] } }, exported.metadata.resourceVersion)], { defaultNamespace: 'default' });
    assert.equal(stale.applied.length, 0);
    assert.match(stale.errors.join('\n'), /has been modified|Conflict|conflict/, stale.errors.join('\n'));
    assert.equal((await store.get<KubeObject & { spec: { selfSigned: Record<string, unknown> } }>(Issuer, "default", "i"))!.spec.selfSigned.crlDistributionPoints, undefined);
    const current = (await store.get(Issuer, 'default', 'i'))!;
    const fresh = await applyManifests(store, [doc({ selfSigned: { crlDistributionPoints: ['http://crl.test'] } }, current.metadata.resourceVersion)], { defaultNamespace: 'default' });
    assert.deepEqual(fresh.errors, []);
    assert.deepEqual(fresh.applied, ['issuer.cert-manager.io/i configured']);
  } finally {
    await store.close();
  }
});
