import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../api/meta.ts';
import { Certificate, ClusterIssuer, EventType } from '../api/resources.ts';
import { StoreError } from '../store/store.ts';
import { FakeClock } from './clock.ts';
import { EventRecorder, type CoreEvent } from './events.ts';
import { openTestStore } from './testing/test-store.ts';
import { createLogger } from './logger.ts';

async function setup() {
  const store = openTestStore();
  const clock = new FakeClock('2026-01-01T00:00:00Z');
  const crt = await store.create<KubeObject>(Certificate, { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { namespace: 'ns', name: 'web' }, spec: {} });
  const recorder = new EventRecorder({ store, clock, component: 'cert-manager-certificates-issuing' });
  const events = async () => (await store.list<CoreEvent>(EventType)).items;
  return { store, clock, crt, recorder, events };
}

test('writes a core/v1 Event about the object', async () => {
  const { crt, recorder, events } = await setup();
  await recorder.event(crt, 'Normal', 'Issuing', 'The certificate has been successfully issued');
  const [ev] = await events();
  assert.equal(ev.metadata.namespace, 'ns');
  assert.match(ev.metadata.name!, /^web\.[0-9a-f]+$/);
  assert.deepEqual(ev.involvedObject, { kind: 'Certificate', apiVersion: 'cert-manager.io/v1', namespace: 'ns', name: 'web', uid: crt.metadata.uid, resourceVersion: crt.metadata.resourceVersion });
  assert.equal(ev.type, 'Normal');
  assert.equal(ev.reason, 'Issuing');
  assert.equal(ev.message, 'The certificate has been successfully issued');
  assert.deepEqual(ev.source, { component: 'cert-manager-certificates-issuing' });
  assert.equal(ev.count, 1);
  assert.equal(ev.firstTimestamp, '2026-01-01T00:00:00Z');
  assert.equal(ev.lastTimestamp, '2026-01-01T00:00:00Z');
});

test('an identical repeat bumps count and lastTimestamp instead of creating another Event', async () => {
  const { clock, crt, recorder, events } = await setup();
  await recorder.event(crt, 'Warning', 'Failed', 'issuer not ready');
  clock.advance(30_000);
  await recorder.event(crt, 'Warning', 'Failed', 'issuer not ready');
  // a burst without awaiting still aggregates
  clock.advance(30_000);
  await Promise.all([recorder.event(crt, 'Warning', 'Failed', 'issuer not ready'), recorder.event(crt, 'Warning', 'Failed', 'issuer not ready')]);
  // a different message or reason is a different Event
  await recorder.event(crt, 'Warning', 'Failed', 'another message');
  await recorder.event(crt, 'Normal', 'Reused', 'issuer not ready');
  const evs = await events();
  assert.equal(evs.length, 3);
  const failed = evs.find((e) => e.message === 'issuer not ready' && e.reason === 'Failed')!;
  assert.equal(failed.count, 4);
  assert.equal(failed.firstTimestamp, '2026-01-01T00:00:00Z');
  assert.equal(failed.lastTimestamp, '2026-01-01T00:01:00Z');
  assert.equal(new Set(evs.map((e) => e.metadata.name)).size, 3, 'names are unique under a fake clock');
});

test('a repeat of an Event deleted meanwhile writes it again with its count', async () => {
  const { store, crt, recorder, events } = await setup();
  await recorder.event(crt, 'Normal', 'Issuing', 'x');
  const [first] = await events();
  await store.delete(EventType, 'ns', first.metadata.name!);
  await recorder.event(crt, 'Normal', 'Issuing', 'x');
  const evs = await events();
  assert.equal(evs.length, 1);
  assert.equal(evs[0].count, 2);
});

test('events about cluster-scoped objects go to the default namespace', async () => {
  const { store, recorder, events } = await setup();
  const issuer = await store.create<KubeObject>(ClusterIssuer, { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'ca' }, spec: {} });
  await recorder.event(issuer, 'Warning', 'ErrInitIssuer', 'bad secret');
  const [ev] = await events();
  assert.equal(ev.metadata.namespace, 'default');
  assert.equal(ev.involvedObject.namespace, undefined);
});

test('a store failure never reaches the caller', async () => {
  const { store, crt, recorder, events } = await setup();
  store.failWrites = () => new StoreError('InternalError', 'disk full');
  await assert.doesNotReject(recorder.event(crt, 'Normal', 'Issuing', 'x'));
  await assert.doesNotReject(recorder.event({ metadata: undefined } as unknown as KubeObject, 'Normal', 'Issuing', 'x'));
  store.failWrites = undefined;
  await recorder.event(crt, 'Normal', 'Issuing', 'x');
  await recorder.flush();
  assert.equal((await events()).length, 1);
});

test('spam filter: an object gets 25 events at once, then one per 5 minutes; other objects are unaffected', async () => {
  const { store, clock, crt, recorder, events } = await setup();
  for (let i = 0; i < 30; i++) await recorder.event(crt, 'Warning', 'Failed', `attempt ${i}`);
  assert.equal((await events()).length, 25);
  const other = await store.create<KubeObject>(Certificate, { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { namespace: 'ns', name: 'other' }, spec: {} });
  await recorder.event(other, 'Normal', 'Issuing', 'fine');
  assert.equal((await events()).length, 26);
  clock.advance(299_000);
  await recorder.event(crt, 'Warning', 'Failed', 'too early');
  assert.equal((await events()).length, 26);
  clock.advance(1_000);
  await recorder.event(crt, 'Warning', 'Failed', 'one earned');
  await recorder.event(crt, 'Warning', 'Failed', 'and no more');
  const messages = (await events()).map((e) => e.message);
  assert.equal(messages.length, 27);
  assert.ok(messages.includes('one earned') && !messages.includes('and no more') && !messages.includes('attempt 25'));
});

test('a component recorder writes Events from that component; repeats aggregate per component; the spam filter counts the object across components', async () => {
  const { crt, recorder, events } = await setup();
  const trigger = recorder.forComponent('cert-manager-certificates-trigger');
  await trigger.event(crt, 'Normal', 'Issuing', 'Issuing certificate as Secret does not exist');
  await trigger.event(crt, 'Normal', 'Issuing', 'Issuing certificate as Secret does not exist');
  await recorder.event(crt, 'Normal', 'Issuing', 'Issuing certificate as Secret does not exist');
  const written = (await events()).map((e) => `${e.source.component} ${e.reportingComponent} x${e.count}`).sort();
  assert.deepEqual(written, [
    'cert-manager-certificates-issuing cert-manager-certificates-issuing x1',
    'cert-manager-certificates-trigger cert-manager-certificates-trigger x2',
  ]);
  // 3 taken above: 22 more from either component, then none
  for (let i = 0; i < 30; i++) await (i % 2 ? trigger : recorder).event(crt, 'Warning', 'Failed', `attempt ${i}`);
  assert.equal((await events()).length, 2 + 22);
});

test('every Event is logged as it is recorded: a Warning at warn level, a Normal one at debug, naming the object', async () => {
  const { store, clock, crt } = await setup();
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (l: string) => { lines.push(JSON.parse(l)); } } });
  const recorder = new EventRecorder({ store, clock, component: 'cert-manager-certificates-issuing', logger });
  await recorder.event(crt, 'Warning', 'Failed', 'The certificate request has failed to complete and will be retried: issuer gone');
  await recorder.event(crt, 'Normal', 'Issuing', 'The certificate has been successfully issued');
  const logged = lines.map((l) => [l.level, l.component, l.kind, l.object, l.reason, l.msg]);
  assert.deepEqual(logged, [
    ['warn', 'cert-manager-certificates-issuing', 'Certificate', 'ns/web', 'Failed', 'The certificate request has failed to complete and will be retried: issuer gone'],
    ['debug', 'cert-manager-certificates-issuing', 'Certificate', 'ns/web', 'Issuing', 'The certificate has been successfully issued'],
  ]);
});
