import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { KubeObject, Secret } from '../api/meta.ts';
import { Certificate, CertificateRequest, SecretType } from '../api/resources.ts';
import { StoreError, UnreadableValueError } from '../store/store.ts';
import { FakeClock } from './clock.ts';
import { Informer, InformerFactory } from './informer.ts';
import { openTestStore } from './testing/test-store.ts';

const settle = async () => { for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r)); };

function crt(ns: string, name: string, spec: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { namespace: ns, name }, spec };
}

function recorder<T extends KubeObject>(inf: Informer<T>) {
  const seen: string[] = [];
  inf.onAdd((o) => seen.push(`add ${o.metadata.name}`));
  inf.onUpdate((a, b) => seen.push(`update ${b.metadata.name} ${a.metadata.resourceVersion}->${b.metadata.resourceVersion}`));
  inf.onDelete((o) => seen.push(`delete ${o.metadata.name}`));
  return seen;
}

test('lists, syncs, then follows creates, updates and deletes', async () => {
  const store = openTestStore();
  await store.create(Certificate, crt('a', 'one'));
  const inf = new Informer(store, Certificate);
  const seen = recorder(inf);
  inf.start();
  await inf.waitForSync();
  assert.equal(inf.hasSynced(), true);
  assert.deepEqual(seen, ['add one']);

  const two = await store.create(Certificate, crt('b', 'two'));
  const updated = await store.update(Certificate, { ...two, spec: { secretName: 'x' } });
  await store.delete(Certificate, 'a', 'one');
  await settle();
  assert.deepEqual(seen, ['add one', 'add two', `update two ${two.metadata.resourceVersion}->${updated.metadata.resourceVersion}`, 'delete one']);
  assert.equal(inf.get('a', 'one'), undefined);
  assert.deepEqual(inf.get('b', 'two')?.spec, { secretName: 'x' });
  assert.deepEqual(inf.list().map((o) => o.metadata.name), ['two']);
  assert.deepEqual(inf.list('a'), []);
  // a handler that arrives late still hears of what is cached
  const late: string[] = [];
  inf.onAdd((o) => late.push(o.metadata.name!));
  assert.deepEqual(late, ['two']);
  inf.stop();
});

test('cached objects are frozen so a controller cannot corrupt the cache', async () => {
  const store = openTestStore();
  await store.create(Certificate, crt('a', 'one', { dnsNames: ['x'] }));
  const inf = new Informer(store, Certificate);
  inf.start();
  await inf.waitForSync();
  const cached = inf.get('a', 'one')!;
  assert.throws(() => { (cached.spec as { dnsNames: string[] }).dnsNames.push('y'); }, TypeError);
  inf.stop();
});

test('indices follow changes: CertificateRequests by owner uid', async () => {
  const store = openTestStore();
  const inf = new Informer(store, CertificateRequest);
  inf.addIndex('owner', (o) => (o.metadata.ownerReferences ?? []).map((r) => r.uid));
  inf.start();
  await inf.waitForSync();
  // a live owner: the store collects what names an owner that is not there
  const u1 = (await store.create(Certificate, crt('ns', 'c'))).metadata.uid!;
  const cr = (owner: string, name: string): KubeObject => ({
    apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
    metadata: { namespace: 'ns', name, ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'c', uid: owner, controller: true }] },
  });
  await store.create(CertificateRequest, cr(u1, 'r1'));
  const r2 = await store.create(CertificateRequest, cr(u1, 'r2'));
  await settle();
  assert.deepEqual(inf.byIndex('owner', u1).map((o) => o.metadata.name).sort(), ['r1', 'r2']);
  await store.update(CertificateRequest, { ...r2, metadata: { ...r2.metadata, ownerReferences: [] } });
  await settle();
  assert.deepEqual(inf.byIndex('owner', u1).map((o) => o.metadata.name), ['r1']);
  // an index added late covers what is already cached
  inf.addIndex('name', (o) => [o.metadata.name!]);
  assert.equal(inf.byIndex('name', 'r2').length, 1);
  assert.throws(() => inf.byIndex('nope', 'x'), /no index nope/);
  inf.stop();
});

test('410 Gone relists and synthesises the changes missed meanwhile', async () => {
  const store = openTestStore();
  const keep = await store.create(Certificate, crt('a', 'keep'));
  await store.create(Certificate, crt('a', 'gone'));
  const inf = new Informer(store, Certificate);
  inf.start();
  await inf.waitForSync();
  const seen = recorder(inf);
  assert.deepEqual(seen.sort(), ['add gone', 'add keep'], 'late handler hears of the cache');
  seen.length = 0;

  // Changes the watch never sees: then the watch breaks and its revision is compacted away.
  let changed = '';
  await store.unseen(async (s) => {
    await s.delete(Certificate, 'a', 'gone');
    changed = (await s.update(Certificate, { ...keep, spec: { changed: true } })).metadata.resourceVersion!;
    await s.create(Certificate, crt('a', 'new'));
  });
  store.compact();
  store.breakWatches(new StoreError('Gone', 'too old resource version'));
  await settle();
  assert.deepEqual(seen.sort(), ['add new', 'delete gone', `update keep ${keep.metadata.resourceVersion}->${changed}`]);
  assert.deepEqual(inf.list().map((o) => o.metadata.name).sort(), ['keep', 'new']);
  // and it watches again
  await store.create(Certificate, crt('a', 'after'));
  await settle();
  assert.ok(inf.get('a', 'after'));
  assert.equal(store.watcherCount(), 1);
  inf.stop();
  assert.equal(store.watcherCount(), 0);
});

test('a failed list is retried with backoff on the clock', async () => {
  const store = openTestStore();
  const clock = new FakeClock();
  let failures = 2;
  const realList = store.list.bind(store);
  store.list = (async (...args: Parameters<typeof realList>) => {
    if (failures-- > 0) throw new StoreError('InternalError', 'database is locked');
    return realList(...args);
  }) as typeof store.list;
  const inf = new Informer(store, Certificate, { clock, listRetryBaseMs: 1000 });
  inf.start();
  await settle();
  assert.equal(inf.hasSynced(), false);
  assert.equal(clock.nextTimerAt()?.getTime(), clock.now().getTime() + 1000);
  clock.advance(1000);
  await settle();
  assert.equal(inf.hasSynced(), false);
  assert.equal(clock.nextTimerAt()?.getTime(), clock.now().getTime() + 2000);
  clock.advance(2000);
  await settle();
  assert.equal(inf.hasSynced(), true);
  inf.stop();
});

test('a list that can never succeed (stored values this store cannot read) fails the sync with its reason instead of retrying forever', async () => {
  const store = openTestStore();
  const clock = new FakeClock();
  const why = 'secrets default/web-tls is encrypted with aesgcm key "key1", which the encryption configuration does not have';
  store.list = (async () => { throw new UnreadableValueError(why); }) as typeof store.list;
  const inf = new Informer(store, SecretType, { clock, listRetryBaseMs: 1000 });
  inf.start();
  await assert.rejects(inf.waitForSync(), (e: Error) => e.message === why);
  assert.equal(clock.nextTimerAt(), undefined, 'not retried');
  inf.stop();
});

test('unmanaged Secrets are cached as metadata only', async () => {
  const store = openTestStore();
  const secret = (name: string, labels: Record<string, string>): Secret => ({
    apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls',
    metadata: { namespace: 'ns', name, labels }, data: { 'tls.key': 'S0VZ', 'tls.crt': 'Q1JU' },
  });
  await store.create(SecretType, secret('ours', { 'controller.cert-manager.io/fao': 'true' }));
  await store.create(SecretType, secret('theirs', { app: 'web' }));
  const inf = new Informer<Secret>(store, SecretType, {
    fullObjectsWhen: (s) => s.metadata.labels?.['controller.cert-manager.io/fao'] === 'true',
  });
  inf.start();
  await inf.waitForSync();
  assert.deepEqual(inf.get('ns', 'ours')?.data, { 'tls.key': 'S0VZ', 'tls.crt': 'Q1JU' });
  const theirs = inf.get('ns', 'theirs')!;
  assert.equal(theirs.data, undefined);
  assert.equal(theirs.type, undefined);
  assert.deepEqual(theirs.metadata.labels, { app: 'web' });
  // labelling a Secret as ours brings its payload into the cache
  const current = (await store.get<Secret>(SecretType, 'ns', 'theirs'))!;
  await store.update(SecretType, { ...current, metadata: { ...current.metadata, labels: { 'controller.cert-manager.io/fao': 'true' } } });
  await settle();
  assert.equal(inf.get('ns', 'theirs')?.data?.['tls.crt'], 'Q1JU');
  inf.stop();
});

test('factory shares one informer per type and starts late ones', async () => {
  const store = openTestStore();
  const factory = new InformerFactory(store);
  const a = factory.informerFor(Certificate);
  assert.equal(factory.informerFor(Certificate), a);
  factory.start();
  const late = factory.informerFor(CertificateRequest);
  await factory.waitForSync();
  assert.equal(late.hasSynced(), true);
  factory.stop();
});

test('waitForSync rejects when stopped before syncing', async () => {
  const store = openTestStore();
  store.list = (() => new Promise(() => {})) as typeof store.list;
  const inf = new Informer(store, Certificate);
  inf.start();
  const waiting = inf.waitForSync();
  inf.stop();
  await assert.rejects(waiting, /stopped before it synced/);
});

test('resync re-delivers cached objects as updates on the clock', async () => {
  const store = openTestStore();
  const clock = new FakeClock();
  await store.create(Certificate, crt('a', 'one'));
  const inf = new Informer(store, Certificate, { clock, resyncMs: 10 * 3600_000 });
  const seen = recorder(inf);
  inf.start();
  await inf.waitForSync();
  clock.advance(10 * 3600_000);
  assert.equal(seen.filter((s) => s.startsWith('update one')).length, 1);
  inf.stop();
});

test('a large list arrives in pages from one snapshot, trimmed page by page', async () => {
  const { openSqliteStore } = await import('../store/sqlite/index.ts');
  const store = openSqliteStore({ path: ':memory:' });
  for (let i = 0; i < 1201; i++) {
    await store.create(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `s${i}`, namespace: 'default' }, data: { big: 'x'.repeat(100) } } as Secret);
  }
  const pages: (number | undefined)[] = [];
  const list = store.list.bind(store);
  store.list = (async (type, opts) => {
    const page = await list(type, opts);
    pages.push(opts?.limit);
    return page;
  }) as typeof store.list;
  const informer = new Informer<Secret>(store, SecretType, { fullObjectsWhen: () => false });
  informer.start();
  await informer.waitForSync();
  assert.equal(pages.length, 3, 'three pages of at most 500');
  assert.ok(pages.every((l) => l === 500));
  assert.equal(informer.list().length, 1201);
  assert.equal(informer.get('default', 's7')?.data, undefined, 'metadata only');
  // the watch resumes from the first page's snapshot: a write after the list is seen
  await store.create(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'late', namespace: 'default' } } as Secret);
  for (let i = 0; i < 50 && !informer.get('default', 'late'); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(informer.get('default', 'late'));
  informer.stop();
  await store.close();
});

test('observing(): a write is in the cache once acknowledged, its watch event then changes nothing, and older events are ignored', async () => {
  const store = openTestStore();
  const factory = new InformerFactory(store, {});
  const inf = factory.informerFor(Certificate, { namespace: 'a' });
  const seen = recorder(inf);
  factory.start();
  await factory.waitForSync();
  const writer = factory.observing(store);

  const one = await writer.create(Certificate, crt('a', 'one'));
  // no turn of the event loop yet: the watch has not delivered, the cache has the write anyway
  assert.equal(inf.get('a', 'one')?.metadata.resourceVersion, one.metadata.resourceVersion);
  assert.deepEqual(seen, ['add one']);
  const two = await writer.update(Certificate, { ...one, spec: { secretName: 'x' } });
  assert.deepEqual(inf.get('a', 'one')?.spec, { secretName: 'x' });
  await settle();
  // the two watch events arrived after their writes were observed: no second add, no update back to the old version
  assert.deepEqual(seen, ['add one', `update one ${one.metadata.resourceVersion}->${two.metadata.resourceVersion}`]);
  assert.equal(inf.get('a', 'one')?.metadata.resourceVersion, two.metadata.resourceVersion);

  // outside the informer's namespace, and dry runs, are not cached
  await writer.create(Certificate, crt('b', 'elsewhere'));
  await writer.create(Certificate, crt('a', 'dry'), { dryRun: true });
  assert.equal(inf.get('b', 'elsewhere'), undefined);
  assert.equal(inf.get('a', 'dry'), undefined);
  // a write through the plain store still arrives by the watch
  await store.create(Certificate, crt('a', 'plain'));
  assert.equal(inf.get('a', 'plain'), undefined);
  await settle();
  assert.ok(inf.get('a', 'plain'));
  factory.stop();
});

test('informer: cached objects leave out managedFields, which no controller reads', async () => {
  const store = openTestStore();
  await store.create(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns', managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:data': {} } }] }, data: { a: 'YQ==' } } as KubeObject);
  assert.ok((await store.get(SecretType, 'ns', 's'))?.metadata.managedFields, 'the store keeps them');
  const informer = new Informer(store, SecretType);
  informer.start();
  await informer.waitForSync();
  const cached = informer.get('ns', 's')!;
  assert.equal(cached.metadata.managedFields, undefined);
  assert.deepEqual((cached as KubeObject & { data?: unknown }).data, { a: 'YQ==' });
  informer.stop();
  await store.close();
});

test('informer: an index answers values naming one object and many, as objects come, change and go', async () => {
  const store = openTestStore();
  const secret = (name: string, app: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'ns', labels: { app } } }) as Secret;
  const informer = new Informer<Secret>(store, SecretType);
  informer.addIndex('app', (s) => [s.metadata.labels?.app ?? '']);
  informer.start();
  await informer.waitForSync();
  const names = (app: string) => informer.byIndex('app', app).map((s) => s.metadata.name).sort();
  const settle = () => new Promise((r) => setTimeout(r, 20));
  await store.create(SecretType, secret('a', 'one'));
  await settle();
  assert.deepEqual(names('one'), ['a']);
  await store.create(SecretType, secret('b', 'one'));
  await store.create(SecretType, secret('c', 'one'));
  await settle();
  assert.deepEqual(names('one'), ['a', 'b', 'c']);
  await store.delete(SecretType, 'ns', 'b');
  await settle();
  assert.deepEqual(names('one'), ['a', 'c']);
  const c = (await store.get<Secret>(SecretType, 'ns', 'c'))!;
  await store.update(SecretType, { ...c, metadata: { ...c.metadata, labels: { app: 'two' } } });
  await settle();
  assert.deepEqual(names('one'), ['a']);
  assert.deepEqual(names('two'), ['c']);
  await store.delete(SecretType, 'ns', 'a');
  await settle();
  assert.deepEqual(names('one'), []);
  assert.deepEqual(informer.list('ns').map((s) => s.metadata.name), ['c']);
  informer.stop();
  await store.close();
});

test('informer: equal strings in cached objects are held once, listed or watched (issue 17)', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const heapUsed = () => { gc(); gc(); return process.memoryUsage().heapUsed; };
  // each object is parsed from its own row or event, so without sharing each holds its own copy
  const big = 'x'.repeat(100_000);
  const withBig = (name: string) => ({ ...crt('a', name), metadata: { namespace: 'a', name, annotations: { 'example.com/big': big } } });
  const store = openTestStore();
  for (let i = 0; i < 100; i++) await store.create(Certificate, withBig(`listed${i}`));
  const before = heapUsed();
  const inf = new Informer(store, Certificate);
  inf.start();
  await inf.waitForSync();
  for (let i = 0; i < 100; i++) await store.create(Certificate, withBig(`watched${i}`));
  await settle();
  assert.equal(inf.list().length, 200);
  // 200 copies would be 20 MB
  const grown = heapUsed() - before;
  assert.ok(grown < 5_000_000, `the cache grew the heap by ${grown} bytes`);
  inf.stop();
  store.close();
});

test('informer: an observed write is cached as a frozen copy, the writer\'s object left as it was, data keys such as __proto__ kept', async () => {
  const store = openTestStore();
  const inf = new Informer(store, Certificate);
  inf.start();
  await inf.waitForSync();
  const written = await store.create(Certificate, crt('a', 'one', { dnsNames: ['x.example.test'], secretName: 'one-tls' }));
  const result = structuredClone(written);
  (result.spec as Record<string, unknown>).extra = JSON.parse('{"__proto__": {"polluted": true}, "date": "a string longer than ten"}');
  inf.observe(result);
  const cached = inf.get('a', 'one')!;
  assert.notEqual(cached, result);
  assert.equal(Object.isFrozen(result), false, 'the writer\'s object is not frozen');
  (result.spec as { dnsNames: string[] }).dnsNames.push('y.example.test');
  assert.deepEqual((cached.spec as { dnsNames: string[] }).dnsNames, ['x.example.test']);
  const extra = (cached.spec as { extra: Record<string, unknown> }).extra;
  assert.equal(Object.getPrototypeOf(extra), Object.prototype);
  assert.deepEqual(Object.keys(extra), ['__proto__', 'date']);
  assert.deepEqual(Object.getOwnPropertyDescriptor(extra, '__proto__')?.value, { polluted: true });
  assert.equal((extra as { polluted?: boolean }).polluted, undefined);
  assert.ok(Object.isFrozen(extra) && Object.isFrozen(cached.spec) && Object.isFrozen((cached.spec as { dnsNames: string[] }).dnsNames));
  inf.stop();
  store.close();
});

test('informer: a copied object (an observed write) costs no more heap than the same object parsed from a list (issue 17)', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const heapUsed = () => { gc(); gc(); return process.memoryUsage().heapUsed; };
  const n = 2000;
  const condition = (type: string) => ({ type, status: 'True', reason: 'Issued', message: 'Certificate fetched from issuer successfully', lastTransitionTime: '2026-01-01T00:00:00Z' });
  const request = (ns: string, i: number, ownerUid: string): KubeObject => ({
    apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
    metadata: {
      namespace: ns, name: `r${i}`, labels: {}, annotations: { 'cert-manager.io/certificate-revision': '1', 'cert-manager.io/certificate-name': `c${i}` },
      ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: `c${i}`, uid: ownerUid, controller: true, blockOwnerDeletion: true }],
    },
    spec: { request: '', issuerRef: { name: 'ca' } },
    status: { conditions: [condition('Approved'), condition('Ready')] },
  } as KubeObject);
  const store = openTestStore();
  for (let i = 0; i < n; i++) {
    // live owners (not listed by the informers): the store collects requests whose owner is not there
    const owner = await store.create(Certificate, crt('listed', `c${i}`));
    const { status, ...created } = request('listed', i, owner.metadata.uid!) as KubeObject & { status: unknown };
    await store.updateStatus(CertificateRequest, { ...await store.create(CertificateRequest, created), status } as KubeObject);
  }
  const written = await store.list(CertificateRequest, { namespace: 'listed' });

  let before = heapUsed();
  const listed = new Informer(store, CertificateRequest, { namespace: 'listed' });
  listed.start();
  await listed.waitForSync();
  const parsedBytes = heapUsed() - before;
  assert.equal(listed.list().length, n);

  // copies of the store's results, as a write returns them (structuredClone'd: strings of their own)
  const copies = written.items.map((o) => structuredClone({ ...o, metadata: { ...o.metadata, namespace: 'observed' } }));
  const observed = new Informer(store, CertificateRequest, { namespace: 'observed' });
  observed.start();
  await observed.waitForSync();
  before = heapUsed();
  for (const o of copies) observed.observe(o);
  const copiedBytes = heapUsed() - before;
  assert.equal(observed.list().length, n);
  // a literal filled field by field was about 5 % larger than the parsed object, the copy now about 20 % smaller
  assert.ok(copiedBytes <= parsedBytes, `${copiedBytes / n} bytes per copied object, ${parsedBytes / n} per parsed one`);
  const [a, b] = observed.list();
  assert.equal(a.metadata.labels, b.metadata.labels, 'empty objects are one');
  assert.equal((a.status as { conditions: { status: string }[] }).conditions[0].status, (b.status as { conditions: { status: string }[] }).conditions[1].status, 'short strings are shared');
  assert.equal(Object.getPrototypeOf(a.metadata), Object.prototype);
  listed.stop();
  observed.stop();
  await store.close();
});
