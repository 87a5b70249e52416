import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LoopShare } from './loop-share.ts';
import { Controller } from './controller.ts';

test('with no request coming in, the whole slice is the budget of a turn', () => {
  let now = 1000;
  const share = new LoopShare({ sliceMs: 20, foregroundSliceMs: 2, foregroundWindowMs: 250, now: () => now });
  now = 1010;
  assert.equal(share.used(), false, 'within the slice');
  now = 1021;
  assert.equal(share.used(), true, 'slice used up');
});

test('a request shrinks the budget until the window after it has passed', async () => {
  let now = 0;
  const share = new LoopShare({ sliceMs: 20, foregroundSliceMs: 2, foregroundWindowMs: 250, now: () => now });
  share.noteRequest();
  now = 1;
  assert.equal(share.used(), false, '1 ms of 2');
  now = 3;
  assert.equal(share.used(), true, 'past the foreground slice');
  now = 300;
  await share.nextTurn();
  now = 310;
  assert.equal(share.used(), false, 'the window is over: 10 ms of the whole slice of 20');
  share.noteRequest();
  assert.equal(share.used(), true, 'a new request: 10 ms is past the foreground slice again');
});

test('one turn for every waiter, and the budget starts again in it', async () => {
  let now = 0;
  const share = new LoopShare({ sliceMs: 5, now: () => now });
  now = 10;
  assert.equal(share.used(), true);
  const a = share.nextTurn();
  assert.equal(share.nextTurn(), a, 'one promise for all who wait in a turn');
  await a;
  assert.equal(share.used(), false, 'a fresh budget');
  assert.notEqual(share.nextTurn(), a, 'the next turn is another');
});

/**
 * Reconciles that never leave the microtask queue (decisions from the caches) of two controllers
 * with four workers each: the event loop must still turn after about one budget of their time,
 * shared by all eight workers (each worker counting its own time let one turn run them all).
 * Time is a fake the reconciles advance by 1 ms each; a setImmediate probe runs once per turn.
 */
async function reconcilesPerTurn(foreground: boolean): Promise<{ max: number; total: number }> {
  let now = 0;
  const share = new LoopShare({ sliceMs: 5, foregroundSliceMs: 1, foregroundWindowMs: 1e9, now: () => now });
  if (foreground) share.noteRequest();
  let sinceTurn = 0;
  let max = 0;
  let total = 0;
  const controllers = ['a', 'b'].map((name) => new Controller({
    name, workers: 4, loopShare: share,
    reconcile: async () => {
      now += 1;
      sinceTurn++;
      total++;
    },
  }));
  for (const c of controllers) {
    for (let i = 0; i < 200; i++) c.enqueue(`ns/${i}`);
    c.start();
  }
  await new Promise<void>((resolve) => {
    const probe = () => {
      max = Math.max(max, sinceTurn);
      sinceTurn = 0;
      if (total >= 400) resolve();
      else setImmediate(probe);
    };
    setImmediate(probe);
  });
  await Promise.all(controllers.map((c) => c.stop()));
  return { max, total };
}

test('eight busy workers of two controllers get one budget per turn of the event loop between them', async () => {
  const { max, total } = await reconcilesPerTurn(false);
  assert.equal(total, 400);
  assert.ok(max >= 5 && max <= 7, `reconciles in one turn: ${max} (5 ms budget, 1 ms each)`);
});

test('while requests come in, the controllers get the foreground budget per turn', async () => {
  const { max, total } = await reconcilesPerTurn(true);
  assert.equal(total, 400);
  assert.ok(max <= 3, `reconciles in one turn: ${max} (1 ms budget, 1 ms each)`);
});
