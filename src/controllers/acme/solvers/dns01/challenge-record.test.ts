// cnameStrategy Follow against pebble-challtestsrv, which answers a CNAME query with one hop, as a
// recursive server does: a chain is followed to its end, up to 10 CNAMEs; a loop and a longer chain
// are refused with the chain in the message, in bounded time. (cert-manager's followCNAMEs refuses
// loops only, in pkg/issuer/acme/dns/util/wait.go; the hop bound is ours.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { challengeRecordName, followCNAMEs } from './challenge-record.ts';
import { startChallTestSrv, type ChallTestSrv } from '../../../../../test/rig/index.ts';
import type { Challenge } from '../../../../api/types.ts';

describe('cnameStrategy Follow: the CNAME chain of _acme-challenge.NAME', () => {
  let cts: ChallTestSrv;
  /** c0.NAME -> c1.NAME -> ... -> cN.NAME, which is no alias */
  const chain = async (name: string, cnames: number) => {
    for (let i = 0; i < cnames; i++) await cts.setCNAME(`c${i}.${name}`, `c${i + 1}.${name}`);
  };
  before(async () => {
    cts = await startChallTestSrv();
  });
  after(() => cts?.stop());

  test('no alias: the name itself; one alias: its target (lower case, no trailing dot); only with Follow', async () => {
    assert.equal(await followCNAMEs('_acme-challenge.plain.test.', [cts.dnsServer]), '_acme-challenge.plain.test');
    await cts.setCNAME('_acme-challenge.alias.test', '_acme-challenge.Target.Other.test');
    assert.equal(await followCNAMEs('_acme-challenge.alias.test', [cts.dnsServer]), '_acme-challenge.target.other.test');
    const c = (cnameStrategy?: string) => ({ spec: { dnsName: 'alias.test', solver: { dns01: { cnameStrategy } } } }) as unknown as Challenge;
    const ctx = { options: { dns01RecursiveNameservers: [cts.dnsServer] } } as Parameters<typeof challengeRecordName>[0];
    assert.equal(await challengeRecordName(ctx, c('Follow')), '_acme-challenge.target.other.test');
    assert.equal(await challengeRecordName(ctx, c('None')), '_acme-challenge.alias.test');
    assert.equal(await challengeRecordName(ctx, c()), '_acme-challenge.alias.test');
  });

  test('a chain of 10 CNAMEs is followed to its end', async () => {
    await chain('ten.test', 10);
    assert.equal(await followCNAMEs('c0.ten.test', [cts.dnsServer]), 'c10.ten.test');
  });

  test('a chain of 11 CNAMEs is refused, naming the chain', async () => {
    await chain('eleven.test', 11);
    await assert.rejects(followCNAMEs('c0.eleven.test', [cts.dnsServer]), {
      message: `more than 10 CNAMEs from c0.eleven.test: ${Array.from({ length: 12 }, (_, i) => `c${i}.eleven.test`).join(' -> ')}`,
    });
  });

  test('a loop (a -> b -> a) and an alias of itself are refused at once, naming the loop', async () => {
    await cts.setCNAME('_acme-challenge.loop.test', 'b.loop.test');
    await cts.setCNAME('b.loop.test', '_acme-challenge.loop.test');
    await cts.setCNAME('_acme-challenge.self.test', '_acme-challenge.self.test');
    const t = Date.now();
    await assert.rejects(followCNAMEs('_acme-challenge.loop.test', [cts.dnsServer]), { message: 'CNAME loop: _acme-challenge.loop.test -> b.loop.test -> _acme-challenge.loop.test' });
    await assert.rejects(followCNAMEs('_acme-challenge.self.test', [cts.dnsServer]), { message: 'CNAME loop: _acme-challenge.self.test -> _acme-challenge.self.test' });
    assert.ok(Date.now() - t < 2000, `${Date.now() - t} ms`);
  });

  test('a recursive server that never answers: an error naming the server, in bounded time', async () => {
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((r) => silent.bind(0, '127.0.0.1', r));
    const server = `127.0.0.1:${silent.address().port}`;
    const t = Date.now();
    try {
      await assert.rejects(followCNAMEs('_acme-challenge.silent.test', [server]), { message: `following the CNAME of _acme-challenge.silent.test via ${server}: queryCname ETIMEOUT _acme-challenge.silent.test` });
    } finally {
      silent.close();
    }
    assert.ok(Date.now() - t < 10_000, `${Date.now() - t} ms`);
  });
});
