import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { AcmeClient, AcmeError, generateAccountKey, type AcmeRequestInfo } from './client.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../../test/rig/index.ts';
import { makeCsr, verifyChain } from '../../test/rig/csr.ts';
import { issueCertificate, type ChallengeSolver } from '../../test/rig/acme-flow.ts';
import { startHTTP01Server, type HTTP01Server } from '../controllers/acme/solvers/http01.ts';

const uniq = () => crypto.randomBytes(4).toString('hex');

function http01Solver(client: AcmeClient, server: HTTP01Server, opts: { wrong?: boolean } = {}): ChallengeSolver {
  return {
    type: 'http-01',
    present: async (_authz, ch) => server.present(ch.token, opts.wrong ? 'not-the-key-authorization' : client.keyAuthorization(ch.token)),
    cleanUp: async (_authz, ch) => server.cleanUp(ch.token),
  };
}

describe('AcmeClient against Pebble, HTTP-01', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let responder: HTTP01Server;

  before(async () => {
    responder = await startHTTP01Server({ host: '127.0.0.1', port: await freePort() });
    cts = await startChallTestSrv();
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: responder.port, alternateRoots: 1 });
  });
  after(async () => {
    await Promise.all([pebble?.stop(), cts?.stop(), responder?.close()]);
  });

  test('issues a certificate that openssl verifies against Pebble root, within 8 requests once the account exists', async () => {
    const requests: AcmeRequestInfo[] = [];
    const client = new AcmeClient({
      directoryUrl: pebble.directoryUrl,
      accountKeyPem: generateAccountKey(),
      caPem: pebble.caPem,
      onRequest: (r) => requests.push(r),
    });
    try {
      const account = await client.registerAccount({ termsOfServiceAgreed: true, email: 'ops@example.test' });
      assert.equal(account.status, 'valid');
      assert.match(account.url, /^https:\/\/127\.0\.0\.1:\d+\//);

      const name = `h-${uniq()}.example.test`;
      const { csrDer } = await makeCsr([name]);
      const before = { ours: requests.length, pebble: pebble.requestCount() };
      const chain = await issueCertificate(client, { dnsNames: [name], csrDer, solver: http01Solver(client, responder) });
      const ours = requests.length - before.ours;
      const theirs = pebble.requestCount() - before.pebble;
      if (process.env.SHOW_REQUESTS) console.log(ours, requests.slice(before.ours).map((r) => `${r.method} ${new URL(r.url).pathname} ${r.status}`));
      assert.equal(ours, theirs, `client counted ${ours} requests, Pebble logged ${theirs}`);
      assert.ok(ours <= 8, `${ours} requests for one certificate: ${requests.slice(before.ours).map((r) => `${r.method} ${new URL(r.url).pathname}`).join(', ')}`);
      assert.ok(!requests.some((r) => r.method === 'HEAD' && requests.indexOf(r) >= before.ours), 'no extra nonce fetches');

      const leaf = new crypto.X509Certificate(chain);
      assert.match(leaf.subjectAltName ?? '', new RegExp(`DNS:${name.replace(/\./g, '\\.')}`));
      const verified = await verifyChain(chain, await pebble.rootPem());
      assert.match(verified, /OK/);
    } finally {
      client.close();
    }
  });

  test('the directory is read again once it is an hour old, so a CA\'s new profiles or renewalInfo are seen without a restart', async () => {
    let now = Date.parse('2026-11-27T00:00:00Z');
    const reads: string[] = [];
    const client = new AcmeClient({
      directoryUrl: pebble.directoryUrl, accountKeyPem: generateAccountKey(), caPem: pebble.caPem, now: () => now,
      onRequest: (r) => { if (r.url === pebble.directoryUrl) reads.push(r.url); },
    });
    try {
      await client.getDirectory();
      now += 59 * 60_000;
      await client.getDirectory();
      assert.equal(reads.length, 1, 'kept for an hour');
      now += 2 * 60_000;
      await client.getDirectory();
      assert.equal(reads.length, 2, 'read again after an hour');
    } finally {
      client.close();
    }
  });

  test('a fresh client with a known account URL needs no account lookup, and preferredChain selects the alternate root', async () => {
    const key = generateAccountKey();
    const first = new AcmeClient({ directoryUrl: pebble.directoryUrl, accountKeyPem: key, caPem: pebble.caPem });
    const { url } = await first.registerAccount({ termsOfServiceAgreed: true });
    first.close();
    assert.equal((await new AcmeClient({ directoryUrl: pebble.directoryUrl, accountKeyPem: key, caPem: pebble.caPem }).findAccount()).url, url);

    const requests: AcmeRequestInfo[] = [];
    const client = new AcmeClient({
      directoryUrl: pebble.directoryUrl, accountKeyPem: key, accountUrl: url, caPem: pebble.caPem, onRequest: (r) => requests.push(r),
    });
    try {
      const altRootPem = await pebble.rootPem(1);
      const altRootCN = /CN=([^\n]+)/.exec(new crypto.X509Certificate(altRootPem).subject)![1];
      const name = `p-${uniq()}.example.test`;
      const { csrDer } = await makeCsr([name]);
      const chain = await issueCertificate(client, {
        dnsNames: [name], csrDer, solver: http01Solver(client, responder), preferredChain: altRootCN,
      });
      assert.match(await verifyChain(chain, altRootPem), /OK/);
      await assert.rejects(verifyChain(chain, await pebble.rootPem(0)));
      assert.ok(!requests.some((r) => r.method === 'POST' && r.url.endsWith('/sign-me-up')), 'no account lookup');
    } finally {
      client.close();
    }
  });

  test('a wrong key authorization fails with an AcmeError naming the domain and the problem', async () => {
    const client = new AcmeClient({ directoryUrl: pebble.directoryUrl, accountKeyPem: generateAccountKey(), caPem: pebble.caPem });
    try {
      await client.registerAccount({ termsOfServiceAgreed: true });
      const name = `bad-${uniq()}.example.test`;
      const { csrDer } = await makeCsr([name]);
      await assert.rejects(
        issueCertificate(client, { dnsNames: [name], csrDer, solver: http01Solver(client, responder, { wrong: true }) }),
        (e: unknown) => {
          assert.ok(e instanceof AcmeError, String(e));
          assert.equal(e.type, 'urn:ietf:params:acme:error:unauthorized');
          assert.ok(e.message.includes(name), e.message);
          assert.ok(e.message.includes('unauthorized'), e.message);
          return true;
        },
      );
    } finally {
      client.close();
    }
  });

  test('requests without a trusted CA fail on TLS; skipTLSVerify accepts it', async () => {
    const untrusting = new AcmeClient({ directoryUrl: pebble.directoryUrl, accountKeyPem: generateAccountKey(), caPem: '' });
    await assert.rejects(untrusting.getDirectory(), /certificate|self.signed|verify/i);
    untrusting.close();
    const skipping = new AcmeClient({ directoryUrl: pebble.directoryUrl, accountKeyPem: generateAccountKey(), skipTLSVerify: true });
    assert.ok((await skipping.getDirectory()).newOrder);
    skipping.close();
  });
});
