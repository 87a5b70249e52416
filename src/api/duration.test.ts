import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration, formatDuration } from './duration.ts';

test('parses Go durations', () => {
  assert.equal(parseDuration('90m'), 90 * 60_000);
  assert.equal(parseDuration('2160h'), 2160 * 3_600_000);
  assert.equal(parseDuration('1h30m'), 90 * 60_000);
  assert.equal(parseDuration('1.5h'), 90 * 60_000);
  assert.equal(parseDuration('0'), 0);
  assert.equal(parseDuration('500ms'), 500);
});

test('rejects malformed durations naming the rule', () => {
  for (const bad of ['', '10', 'h', '1d', '1h 30m', 'abc']) {
    assert.throws(() => parseDuration(bad), /invalid duration/);
  }
});

test('formats like Go', () => {
  assert.equal(formatDuration(2160 * 3_600_000), '2160h0m0s');
  assert.equal(formatDuration(5 * 60_000), '5m0s');
  assert.equal(formatDuration(90_500), '1m30.5s');
});

test('refuses durations beyond Go\'s int64 nanoseconds (about 292 years), as upstream does', () => {
  assert.equal(parseDuration('2562047h'), 2562047 * 3_600_000);
  for (const bad of ['99999999999999h', '2562048h', '9999999999999999999999999s', '-99999999999999h']) {
    assert.throws(() => parseDuration(bad), /out of range \(the longest duration is 2562047h47m16.854775807s/, bad);
  }
});

test('parseDuration takes no surrounding spaces, as Go\'s time.ParseDuration (cert-manager\'s webhook) takes none', () => {
  for (const text of ['2h ', ' 2h', '1h 30m', '\t90m']) assert.throws(() => parseDuration(text), /invalid duration/, JSON.stringify(text));
});
