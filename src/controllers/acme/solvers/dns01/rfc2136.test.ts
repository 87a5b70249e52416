import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { addTXT, removeTXT, DNSUpdateError, type TsigAlgorithm } from './rfc2136.ts';
import { checkDNS01, findZone } from '../../../../shared/dns01-selfcheck.ts';
import { startNamed, type Named } from '../../../../../test/rig/index.ts';

// hmac-md5 is cert-manager's default when tsigAlgorithm is empty; hmac-sha1 is what many old zones use
for (const algorithm of ['hmac-md5', 'hmac-sha1', 'hmac-sha256', 'hmac-sha512'] as TsigAlgorithm[]) {
  describe(`RFC 2136 with TSIG ${algorithm} against named`, () => {
    let named: Named;
    let base: { nameserver: string; zone: string; tsig: { name: string; algorithm: TsigAlgorithm; secretBase64: string } };
    before(async () => {
      named = await startNamed({ zone: 'example.test', tsig: { name: 'acme-update', algorithm } });
      base = { nameserver: named.server, zone: 'example.test', tsig: { name: 'acme-update', algorithm, secretBase64: named.tsigSecret } };
    });
    after(() => named?.stop());

    test('adds TXT values, removes exactly one, and the self-check sees each state', async () => {
      const fqdn = '_acme-challenge.www.example.test';
      await addTXT({ ...base, fqdn, value: 'first', ttl: 5 });
      await addTXT({ ...base, fqdn, value: 'second', ttl: 5 });
      const both = await checkDNS01({ fqdn, value: 'first', nameservers: [named.server] });
      assert.equal(both.ok, true, both.reason);
      assert.deepEqual(both.seen[named.server].sort(), ['first', 'second']);

      await removeTXT({ ...base, fqdn, value: 'first' });
      const after = await checkDNS01({ fqdn, value: 'first', nameservers: [named.server] });
      assert.equal(after.ok, false);
      assert.match(after.reason!, /_acme-challenge\.www\.example\.test.*"second"/);
      assert.equal((await checkDNS01({ fqdn, value: 'second', nameservers: [named.server] })).ok, true);
    });

    test('a value longer than 255 bytes is split into strings and read back whole', async () => {
      const fqdn = '_acme-challenge.long.example.test';
      const value = 'x'.repeat(300);
      await addTXT({ ...base, fqdn, value });
      assert.equal((await checkDNS01({ fqdn, value, nameservers: [named.server] })).ok, true);
    });

    test('a wrong secret is refused with NOTAUTH/BADSIG, an unknown key with BADKEY', async () => {
      const wrong = { ...base.tsig, secretBase64: Buffer.alloc(32, 7).toString('base64') };
      await assert.rejects(addTXT({ ...base, tsig: wrong, fqdn: '_acme-challenge.x.example.test', value: 'v' }), (e: unknown) => {
        assert.ok(e instanceof DNSUpdateError);
        assert.equal(e.rcode, 'NOTAUTH');
        assert.equal(e.tsigError, 'BADSIG');
        assert.match(e.message, /NOTAUTH.*BADSIG/);
        assert.ok(!e.message.includes(wrong.secretBase64), 'the secret stays out of the message');
        return true;
      });
      await assert.rejects(
        addTXT({ ...base, tsig: { ...base.tsig, name: 'no-such-key' }, fqdn: '_acme-challenge.x.example.test', value: 'v' }),
        /NOTAUTH \(TSIG BADKEY\)/,
      );
    });

    test('protocol TCP reaches a server that answers on TCP only; UDP does not', async () => {
      // a TCP-only front for named: nothing listens on UDP at this port
      const front = net.createServer((c) => {
        const up = net.connect(named.port, '127.0.0.1');
        c.pipe(up).pipe(c);
        c.on('error', () => up.destroy());
        up.on('error', () => c.destroy());
      });
      await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
      const tcpOnly = `127.0.0.1:${(front.address() as net.AddressInfo).port}`;
      try {
        const fqdn = '_acme-challenge.tcp.example.test';
        await addTXT({ ...base, nameserver: tcpOnly, protocol: 'TCP', fqdn, value: 'over-tcp' });
        assert.equal((await checkDNS01({ fqdn, value: 'over-tcp', nameservers: [named.server] })).ok, true);
        await removeTXT({ ...base, nameserver: tcpOnly, protocol: 'TCP', fqdn, value: 'over-tcp' });
        assert.equal((await checkDNS01({ fqdn, value: 'over-tcp', nameservers: [named.server] })).ok, false);
        await assert.rejects(addTXT({ ...base, nameserver: tcpOnly, protocol: 'UDP', fqdn, value: 'v', timeoutMs: 300 }), /no answer/);
      } finally {
        await new Promise((r) => front.close(r));
      }
    });

    test('an update outside the zone the key may change is refused with a named RCODE', async () => {
      await assert.rejects(addTXT({ ...base, zone: 'other.test', fqdn: '_acme-challenge.other.test', value: 'v' }), /NOTAUTH|REFUSED/);
    });
  });
}

describe('DNS-01 self-check and zone discovery', () => {
  let named: Named;
  let tsig: { name: string; algorithm: TsigAlgorithm; secretBase64: string };
  before(async () => {
    named = await startNamed({ zone: 'example.test', tsig: { name: 'k1', algorithm: 'hmac-sha256' } });
    tsig = { name: 'k1', algorithm: 'hmac-sha256', secretBase64: named.tsigSecret };
  });
  after(() => named?.stop());

  test('findZone walks up to the SOA', async () => {
    assert.equal(await findZone('_acme-challenge.a.b.example.test.', [named.server]), 'example.test');
    assert.equal(await findZone('example.test', [named.server]), 'example.test');
  });

  test('authoritativeOnly asks the zone NS hosts found through the given servers', async () => {
    const fqdn = '_acme-challenge.auth.example.test';
    await addTXT({ nameserver: named.server, zone: 'example.test', fqdn, value: 'auth-value', tsig });
    const res = await checkDNS01({ fqdn, value: 'auth-value', nameservers: [named.server], authoritativeOnly: true, authoritativePort: named.port });
    assert.equal(res.ok, true, res.reason);
    // ns.example.test has A 127.0.0.1 in the rig zone.
    assert.deepEqual(Object.keys(res.seen), [`127.0.0.1:${named.port}`]);
  });

  test('a response whose signed content was altered in transit is rejected (response MAC is verified)', async () => {
    const proxy = dgram.createSocket('udp4');
    const upstreamPort = named.port;
    proxy.on('message', (msg, client) => {
      const up = dgram.createSocket('udp4');
      up.on('message', (res) => {
        // The question's first name byte after the length octet: upper-casing keeps DNS meaning, breaks the MAC.
        const tampered = Buffer.from(res);
        tampered[13] = tampered[13] ^ 0x20;
        proxy.send(tampered, client.port, client.address);
        up.close();
      });
      up.send(msg, upstreamPort, '127.0.0.1');
    });
    await new Promise<void>((r) => proxy.bind(0, '127.0.0.1', () => r()));
    try {
      await assert.rejects(
        addTXT({ nameserver: `127.0.0.1:${proxy.address().port}`, zone: 'example.test', fqdn: '_acme-challenge.mitm.example.test', value: 'v', tsig }),
        /bad TSIG MAC/,
      );
    } finally {
      proxy.close();
    }
  });
});
