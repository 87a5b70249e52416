import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { AcmeClient, AcmeError, generateAccountKey } from './client.ts';
import { freePort, startNamed, startPebble, type Named, type Pebble } from '../../test/rig/index.ts';
import { makeCsr, verifyChain } from '../../test/rig/csr.ts';
import { issueCertificate, type ChallengeSolver } from '../../test/rig/acme-flow.ts';
import { addTXT, removeTXT, type TsigKey } from '../controllers/acme/solvers/dns01/rfc2136.ts';
import { checkDNS01 } from '../shared/dns01-selfcheck.ts';

const uniq = () => crypto.randomBytes(4).toString('hex');

describe('AcmeClient DNS-01 through RFC 2136 into named, validated by Pebble', () => {
  let named: Named;
  let pebble: Pebble;
  let tsig: TsigKey;
  let client: AcmeClient;

  before(async () => {
    named = await startNamed({ zone: 'example.test', tsig: { name: 'acme-update', algorithm: 'hmac-sha512' } });
    tsig = { name: 'acme-update', algorithm: 'hmac-sha512', secretBase64: named.tsigSecret };
    pebble = await startPebble({ dnsServer: named.server, httpPort: await freePort() });
    client = new AcmeClient({ directoryUrl: pebble.directoryUrl, accountKeyPem: generateAccountKey(), caPem: pebble.caPem });
    await client.registerAccount({ termsOfServiceAgreed: true });
  });
  after(async () => {
    client?.close();
    await Promise.all([pebble?.stop(), named?.stop()]);
  });

  function rfc2136Solver(opts: { wrongValue?: boolean } = {}): ChallengeSolver {
    const record = (authz: { identifier: { value: string } }, token: string) => ({
      nameserver: named.server,
      zone: 'example.test',
      fqdn: `_acme-challenge.${authz.identifier.value}`,
      value: opts.wrongValue ? 'not-the-digest' : client.dns01TxtValue(token),
      tsig,
    });
    return {
      type: 'dns-01',
      async present(authz, ch) {
        const r = record(authz, ch.token);
        await addTXT({ ...r, ttl: 5 });
        const check = await checkDNS01({ fqdn: r.fqdn, value: r.value, nameservers: [named.server] });
        assert.equal(check.ok, true, check.reason);
      },
      cleanUp: (authz, ch) => removeTXT(record(authz, ch.token)),
    };
  }

  test('issues a two-name certificate whose chain openssl verifies', async () => {
    const names = [`d-${uniq()}.example.test`, `e-${uniq()}.example.test`];
    const { csrDer } = await makeCsr(names);
    const chain = await issueCertificate(client, { dnsNames: names, csrDer, solver: rfc2136Solver() });
    const san = new crypto.X509Certificate(chain).subjectAltName ?? '';
    for (const n of names) assert.ok(san.includes(`DNS:${n}`), san);
    assert.match(await verifyChain(chain, await pebble.rootPem()), /OK/);
    // Cleaned up: the record is gone again.
    assert.equal((await checkDNS01({ fqdn: `_acme-challenge.${names[0]}`, value: 'x', nameservers: [named.server] })).seen[named.server].length, 0);
  });

  test('a wrong TXT value fails with an AcmeError naming the domain and the error', async () => {
    const name = `wrong-${uniq()}.example.test`;
    const { csrDer } = await makeCsr([name]);
    await assert.rejects(issueCertificate(client, { dnsNames: [name], csrDer, solver: rfc2136Solver({ wrongValue: true }) }), (e: unknown) => {
      assert.ok(e instanceof AcmeError, String(e));
      assert.equal(e.shortType, 'unauthorized');
      assert.ok(e.message.includes(name), e.message);
      assert.match(e.message, /dns-01/);
      return true;
    });
  });
});
