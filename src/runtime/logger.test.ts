import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger, controllerLogger } from './logger.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { lines, destination: destination as unknown as { write(s: string): void } };
}

test('logs JSON with level label and controller name on child loggers', () => {
  const { lines, destination } = capture();
  const log = controllerLogger(createLogger({ level: 'info', destination }), 'certificates-issuing');
  log.info({ key: 'ns/a' }, 'synced');
  log.debug('hidden at info');
  assert.equal(lines.length, 1);
  assert.equal(lines[0].level, 'info');
  assert.equal(lines[0].controller, 'certificates-issuing');
  assert.equal(lines[0].msg, 'synced');
  assert.equal(lines[0].key, 'ns/a');
});

test('redacts secret payloads and private keys wherever they appear', () => {
  const { lines, destination } = capture();
  const log = createLogger({ level: 'info', destination });
  const pem = '-----BEGIN PRIVATE KEY-----MIIEvQ';
  log.info({ secret: { metadata: { name: 's' }, data: { 'tls.key': pem } } }, 'secret');
  log.info({ data: { 'tls.crt': 'x' }, privateKey: pem }, 'top level');
  log.info({ obj: { tls: { key: pem } } }, 'nested tls.key');
  log.info({ keys: { 'tls.key': pem } }, 'dotted name');
  const text = JSON.stringify(lines);
  assert.equal(text.includes('MIIEvQ'), false, text);
  assert.equal((lines[0].secret as { metadata: { name: string } }).metadata.name, 's');
});

test('level comes from CERTSMITH_LOG_LEVEL when not given', () => {
  const before = process.env.CERTSMITH_LOG_LEVEL;
  process.env.CERTSMITH_LOG_LEVEL = 'warn';
  try {
    assert.equal(createLogger().level, 'warn');
  } finally {
    if (before === undefined) delete process.env.CERTSMITH_LOG_LEVEL;
    else process.env.CERTSMITH_LOG_LEVEL = before;
  }
});
