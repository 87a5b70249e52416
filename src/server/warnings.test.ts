// The request warning recorder on a real HTTP response: one header per warning, duplicates
// dropped, kube's truncation past 4 KiB of text, nothing recorded outside a request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { addWarning, withWarningRecorder } from './warnings.ts';

/** the Warning headers a response carries after `warn` ran inside its request */
async function warningsAfter(warn: () => void): Promise<string[]> {
  const server = http.createServer((_req, res) => withWarningRecorder(res, () => {
    warn();
    res.end('ok');
  }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise((resolve, reject) => {
      http.get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, (res) => {
        res.resume();
        res.on('end', () => resolve(res.rawHeaders.filter((_, i) => i % 2 === 1 && res.rawHeaders[i - 1].toLowerCase() === 'warning')));
      }).on('error', reject);
    });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

test('each warning is one 299 header, in order, once; empty text is dropped', async () => {
  const got = await warningsAfter(() => {
    for (const w of ['first', 'second', 'first', '', 'say "hi"']) assert.equal(addWarning(w), true);
  });
  assert.deepEqual(got, ['299 - "first"', '299 - "second"', '299 - "say \\"hi\\""']);
});

test('past 4 KiB of text every warning is cut to 256 characters, earlier ones too; then further ones are dropped', async () => {
  const long = (c: string) => c.repeat(1000);
  const got = await warningsAfter(() => {
    for (const c of 'abcdefghijklmnopqrstuvwxyz') addWarning(long(c));
  });
  // 4 warnings of 1000 fit; the 5th starts truncation: 16 of 256 make 4096, after which nothing is added
  assert.equal(got.length, 16);
  assert.equal(got[0], `299 - "${'a'.repeat(256)}"`);
  assert.equal(got[15], `299 - "${'p'.repeat(256)}"`);
});

test('outside a request there is no one to warn', () => {
  assert.equal(addWarning('lost'), false);
});
