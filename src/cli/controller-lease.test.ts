// The server's controllers failing to start must not leave a server that answers /readyz and
// renews nothing: before the server serves, the failure is the server's start failing; later
// (the Lease taken after another holder let it go), the server is told so it can exit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { FakeClock, realClock } from '../runtime/clock.ts';
import { silentLogger } from '../runtime/logger.ts';
import { leaseName, runServerControllers, SERVER_IDENTITY_PREFIX, serverLeaseNamespace } from './controller-lease.ts';
import { LeaseType } from '../api/resources.ts';

test('controllers that fail to start make runServerControllers fail, naming the cause; a later failure is not swallowed either', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  try {
    const later: Error[] = [];
    await assert.rejects(runServerControllers({
      store, clock: realClock, logger: silentLogger, say: () => {},
      start: () => Promise.reject(new Error('files owner "nobody:x": no group named "x" in /etc/group')),
      onLaterStartFailure: (e) => later.push(e),
    }), /the controllers failed to start: files owner "nobody:x": no group named "x"/);
    assert.equal(later.length, 0);
    // and a start that succeeds runs them
    let started = 0;
    const running = await runServerControllers({
      store, clock: realClock, logger: silentLogger, say: () => {},
      start: async () => { started++; return { stop: async () => {} }; },
      onLaterStartFailure: (e) => later.push(e),
    });
    assert.equal(started, 1);
    await running.stop();
  } finally {
    await store.close();
  }
});

test('a Lease left by a server that ran on this data dir before is taken over at once, and nothing says this server waits for it', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  try {
    const now = new Date().toISOString();
    await store.create(LeaseType, {
      apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: leaseName, namespace: serverLeaseNamespace },
      spec: { holderIdentity: `${SERVER_IDENTITY_PREFIX}killed-host_1234`, leaseDurationSeconds: 60, acquireTime: now, renewTime: now },
    } as never);
    const said: string[] = [];
    let started = 0;
    const running = await runServerControllers({
      store, clock: realClock, logger: silentLogger, say: (line) => said.push(line),
      start: async () => { started++; return { stop: async () => {} }; },
      onLaterStartFailure: () => {},
    });
    assert.equal(started, 1);
    assert.ok(!said.some((l) => /start once it is released or expires/.test(l)), said.join('\n'));
    assert.ok(said.some((l) => l.includes(`${SERVER_IDENTITY_PREFIX}killed-host_1234`) && /takes over/.test(l)), said.join('\n'));
    await running.stop();
  } finally {
    await store.close();
  }
});

test('a stop while controllers taken on later are still starting waits for them and stops them; their start failing then is not a failure to report', async () => {
  // seen in CI: a server SIGTERMed while its controllers were starting had the start fail on the closing
  // store, took that for a later start failure, sent itself a second SIGTERM and died of it (exit null)
  for (const outcome of ['starts', 'fails'] as const) {
    const store = openSqliteStore({ path: ':memory:' });
    const clock = new FakeClock(new Date());
    try {
      const now = clock.now().toISOString();
      await store.create(LeaseType, {
        apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: leaseName, namespace: serverLeaseNamespace },
        spec: { holderIdentity: 'other-host_controller', leaseDurationSeconds: 60, acquireTime: now, renewTime: now },
      } as never);
      const later: Error[] = [];
      let stopped = 0;
      let startCalled = false;
      let finishStart: () => void = () => {};
      const running = await runServerControllers({
        store, clock, logger: silentLogger, say: () => {},
        start: () => {
          startCalled = true;
          return new Promise((resolve, reject) => {
            finishStart = () => (outcome === 'starts' ? resolve({ stop: async () => { stopped++; } }) : reject(new Error('store closed')));
          });
        },
        onLaterStartFailure: (e) => later.push(e),
      });
      // the other holder stops renewing: the server takes the Lease once it expires and starts its controllers
      for (let i = 0; i < 20 && !startCalled; i++) {
        clock.advance(15_000 * 2.2);
        await new Promise((r) => setTimeout(r, 5));
      }
      assert.ok(startCalled, 'the server took the Lease after it expired');
      const stopping = running.stop();
      await new Promise((r) => setTimeout(r, 5));
      finishStart();
      await stopping;
      assert.equal(stopped, outcome === 'starts' ? 1 : 0, 'controllers that finished starting during the stop are stopped');
      assert.deepEqual(later, [], 'a start that fails because the server is stopping is not a later start failure');
    } finally {
      await store.close();
    }
  }
});
