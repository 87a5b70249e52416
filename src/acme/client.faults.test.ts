import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { AcmeClient, AcmeError, generateAccountKey, type AcmeRequestInfo } from './client.ts';
import { startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../../test/rig/index.ts';
import { makeCsr, verifyChain } from '../../test/rig/csr.ts';
import { issueCertificate } from '../../test/rig/acme-flow.ts';
import { startHTTP01Server, type HTTP01Server } from '../controllers/acme/solvers/http01.ts';

const uniq = () => crypto.randomBytes(4).toString('hex');

describe('AcmeClient against a misbehaving or demanding Pebble', () => {
  let cts: ChallTestSrv;
  let responder: HTTP01Server;
  let noisy: Pebble;
  let eab: Pebble;
  const eabKeyId = 'kid-1';
  const eabKey = crypto.randomBytes(32).toString('base64url');

  before(async () => {
    responder = await startHTTP01Server({ host: '127.0.0.1', port: 0 });
    cts = await startChallTestSrv();
    [noisy, eab] = await Promise.all([
      startPebble({ dnsServer: cts.dnsServer, httpPort: responder.port, nonceReject: 30 }),
      startPebble({ dnsServer: cts.dnsServer, httpPort: responder.port, eabKeys: { [eabKeyId]: eabKey } }),
    ]);
  });
  after(async () => {
    await Promise.all([noisy?.stop(), eab?.stop(), cts?.stop(), responder?.close()]);
  });

  const solver = (client: AcmeClient) => ({
    type: 'http-01' as const,
    present: async (_a: unknown, ch: { token: string }) => responder.present(ch.token, client.keyAuthorization(ch.token)),
    cleanUp: async (_a: unknown, ch: { token: string }) => responder.cleanUp(ch.token),
  });

  test('with 30% of nonces rejected, certificates are still issued (badNonce retried with the nonce from the error)', async () => {
    const requests: AcmeRequestInfo[] = [];
    const client = new AcmeClient({
      directoryUrl: noisy.directoryUrl, accountKeyPem: generateAccountKey(), caPem: noisy.caPem, onRequest: (r) => requests.push(r),
    });
    try {
      await client.registerAccount({ termsOfServiceAgreed: true });
      for (let i = 0; i < 3; i++) {
        const name = `n${i}-${uniq()}.example.test`;
        const { csrDer } = await makeCsr([name]);
        const chain = await issueCertificate(client, { dnsNames: [name], csrDer, solver: solver(client) });
        assert.match(await verifyChain(chain, await noisy.rootPem()), /OK/);
      }
      const rejected = requests.filter((r) => r.status === 400).length;
      assert.ok(rejected > 0, 'Pebble rejected some nonces');
      // Every retry reused the nonce from the error response: no extra nonce fetches.
      assert.equal(requests.filter((r) => r.method === 'HEAD').length, 1);
    } finally {
      client.close();
    }
  });

  test('external account binding: required, verified, and then the account issues', async () => {
    const key = generateAccountKey();
    const client = new AcmeClient({ directoryUrl: eab.directoryUrl, accountKeyPem: key, caPem: eab.caPem });
    try {
      assert.equal((await client.getDirectory()).meta?.externalAccountRequired, true);
      await assert.rejects(client.registerAccount({ termsOfServiceAgreed: true }), (e: unknown) => {
        assert.ok(e instanceof AcmeError);
        assert.equal(e.shortType, 'externalAccountRequired');
        return true;
      });
      await assert.rejects(
        client.registerAccount({ termsOfServiceAgreed: true, eab: { keyId: eabKeyId, hmacKeyBase64: crypto.randomBytes(32).toString('base64url') } }),
        AcmeError,
      );
      const account = await client.registerAccount({ termsOfServiceAgreed: true, eab: { keyId: eabKeyId, hmacKeyBase64: eabKey } });
      assert.equal(account.status, 'valid');
      const name = `eab-${uniq()}.example.test`;
      const { csrDer } = await makeCsr([name]);
      const chain = await issueCertificate(client, { dnsNames: [name], csrDer, solver: solver(client) });
      assert.match(await verifyChain(chain, await eab.rootPem()), /OK/);
    } finally {
      client.close();
    }
  });

  test('findAccount for an unknown key fails with accountDoesNotExist', async () => {
    const client = new AcmeClient({ directoryUrl: noisy.directoryUrl, accountKeyPem: generateAccountKey(), caPem: noisy.caPem });
    await assert.rejects(client.findAccount(), (e: unknown) => e instanceof AcmeError && e.shortType === 'accountDoesNotExist');
    client.close();
  });
});
