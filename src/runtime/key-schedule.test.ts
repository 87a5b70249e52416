import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './clock.ts';
import { KeySchedule } from './key-schedule.ts';

test('KeySchedule: many keys behind one timer, each due at its instant, in order', () => {
  const clock = new FakeClock(0);
  const due: string[] = [];
  const s = new KeySchedule(clock, (k) => due.push(`${k}@${clock.now().getTime()}`));
  for (let i = 0; i < 1000; i++) s.schedule(`k${i}`, 1000 + ((i * 7919) % 1000));
  s.schedule('same-instant-first', 1500);
  s.schedule('same-instant-second', 1500);
  assert.equal(clock.pendingTimers(), 1);
  assert.equal(s.size, 1002);
  clock.advance(999);
  assert.equal(due.length, 0);
  clock.advance(2000);
  assert.equal(due.length, 1002);
  const instants = due.map((d) => Number(d.split('@')[1]));
  assert.deepEqual(instants, [...instants].sort((a, b) => a - b));
  const at1500 = due.filter((d) => d.endsWith('@1500')).map((d) => d.split('@')[0]);
  assert.deepEqual(at1500.slice(-2), ['same-instant-first', 'same-instant-second']);
  assert.equal(s.size, 0);
  assert.equal(clock.pendingTimers(), 0);
});

test('KeySchedule: a key scheduled again moves (earlier or later), a cancelled one never comes', () => {
  const clock = new FakeClock(0);
  const due: string[] = [];
  const s = new KeySchedule(clock, (k) => due.push(`${k}@${clock.now().getTime()}`));
  s.schedule('a', 100);
  s.schedule('b', 200);
  s.schedule('c', 300);
  s.schedule('a', 250);
  s.schedule('c', 50);
  s.cancel('b');
  assert.equal(s.dueAt('a'), 250);
  assert.equal(s.dueAt('b'), undefined);
  assert.equal(clock.nextTimerAt()?.getTime(), 50);
  clock.advance(1000);
  assert.deepEqual(due, ['c@50', 'a@250']);
  // the timer follows the earliest live key
  s.schedule('x', 5000);
  s.schedule('y', 2000);
  assert.equal(clock.nextTimerAt()?.getTime(), 2000);
  s.cancel('y');
  assert.equal(clock.nextTimerAt()?.getTime(), 5000);
  s.clear();
  assert.equal(clock.pendingTimers(), 0);
});

test('KeySchedule: rescheduling one key over and over keeps the heap small and the key due once', () => {
  const clock = new FakeClock(0);
  const due: string[] = [];
  const s = new KeySchedule(clock, (k) => due.push(k));
  for (let i = 0; i < 10_000; i++) {
    s.schedule('k', 1_000_000 - i);
    s.schedule(`other${i % 10}`, 2_000_000 + i);
  }
  assert.equal(s.size, 11);
  assert.ok((s as unknown as { heap: unknown[] }).heap.length <= 64 + 2 * 11);
  clock.advance(3_000_000);
  assert.equal(due.filter((k) => k === 'k').length, 1);
  assert.equal(due.length, 11);
});

test('KeySchedule: a key scheduled from onDue for now comes in the same advance', () => {
  const clock = new FakeClock(0);
  const due: string[] = [];
  const s: KeySchedule = new KeySchedule(clock, (k) => {
    due.push(`${k}@${clock.now().getTime()}`);
    if (k === 'first') s.schedule('then', clock.now().getTime() + 10);
  });
  s.schedule('first', 100);
  clock.advance(1000);
  assert.deepEqual(due, ['first@100', 'then@110']);
});
