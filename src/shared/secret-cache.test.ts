import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../api/meta.ts';
import { ManagedLabel } from '../api/annotations.ts';
import { SecretType } from '../api/resources.ts';
import { InformerFactory } from '../runtime/informer.ts';
import { openTestStore } from '../runtime/testing/test-store.ts';
import type { Store } from '../store/store.ts';
import { issuerController } from '../controllers/issuers/controller.ts';
import type { ControllerContext } from '../controllers/context.ts';
import { readSecret, secretCache } from './secret-cache.ts';

const secret = (name: string, labels: Record<string, string> = {}) =>
  ({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'ns', name, labels }, type: 'Opaque', data: { k: 'dg==' } }) as KubeObject;

/** a store with a user's Secret and one certsmith wrote, counting the reads that reach it */
async function setup() {
  const inner = openTestStore();
  await inner.create(SecretType, secret('users'));
  await inner.create(SecretType, secret('ours', { [ManagedLabel.fao]: 'true' }));
  const reads: string[] = [];
  const store: Store = { ...inner, get: (t, ns, n) => { reads.push(n); return inner.get(t, ns, n); } } as Store;
  const informers = new InformerFactory(store);
  return { store, informers, reads };
}

test('the Secret cache holds a user\'s Secret as metadata only, whichever controller asks for it first', async () => {
  const { store, informers } = await setup();
  // the issuer controller used to ask for a plain Secret informer: made first, it cached every Secret whole
  issuerController({ store, informers, options: {} } as unknown as ControllerContext, false);
  const cache = secretCache(informers);
  informers.start();
  await informers.waitForSync();
  assert.equal(cache.get('ns', 'users')?.data, undefined);
  assert.deepEqual(cache.get('ns', 'ours')?.data, { k: 'dg==' });
  informers.stop();
});

test('readSecret: a Secret the cache holds whole comes from it; the rest (metadata only, or not seen yet) from the store', async () => {
  const { store, informers, reads } = await setup();
  const cache = secretCache(informers);
  informers.start();
  await informers.waitForSync();
  const ctx = { store, informers };
  assert.deepEqual((await readSecret(ctx, 'ns', 'ours'))?.data, { k: 'dg==' });
  assert.deepEqual(reads, []);
  assert.deepEqual((await readSecret(ctx, 'ns', 'users'))?.data, { k: 'dg==' });
  assert.equal(await readSecret(ctx, 'ns', 'absent'), undefined);
  assert.deepEqual(reads, ['users', 'absent']);
  assert.ok(cache.get('ns', 'ours'));
  informers.stop();
});
