// The server's controllers failing to start must not leave a server that answers /readyz and
// renews nothing: before the server serves, the failure is the server's start failing; later
// (the Lease taken after another holder let it go), the server is told so it can exit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { realClock } from '../runtime/clock.ts';
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
