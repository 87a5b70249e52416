// An ACME Issuer whose DNS-01 solver cannot work is not Ready at once, with a reason and message
// naming the solver and the field (issue 15: akamai was accepted and silently ignored; issue 14
// implements it, so its missing credentials are what is reported now).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { brokenSolver } from './preflight.ts';
import type { ACMESolver } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';

// a configuration missing a field is refused before anything is read: a context with no store or options suffices
const ctx = { options: {} } as unknown as ControllerContext;
const issuerWith = (solvers: ACMESolver[]) => ({ kind: 'ClusterIssuer', metadata: { name: 'le' }, spec: { acme: { solvers } } });

test('an akamai DNS-01 solver without all three EdgeGrid Secrets makes the Issuer Ready=False naming the solver and the field', async () => {
  const akamai = { dns01: { akamai: { serviceConsumerDomain: 'akab-x.luna.akamaiapis.net', clientTokenSecretRef: { name: 'a', key: 'b' } } } } as unknown as ACMESolver;
  const broken = await brokenSolver(ctx, issuerWith([{ http01: { ingress: {} } } as ACMESolver, akamai]));
  assert.equal(broken?.reason, 'InvalidSolverConfig');
  assert.equal(broken?.message, 'solvers[1].dns01: akamai.clientSecretSecretRef is required (a Secret name and key)');
});

test('an rfc2136 solver without TSIG makes the Issuer Ready=False at once: certsmith never sends unsigned updates, so every Challenge would fail', async () => {
  for (const rfc2136 of [{ nameserver: '127.0.0.1:53' }, { nameserver: '127.0.0.1:53', tsigKeyName: 'k' }, { nameserver: '127.0.0.1:53', tsigSecretSecretRef: { name: 's', key: 'k' } }]) {
    const broken = await brokenSolver(ctx, issuerWith([{ dns01: { rfc2136 } } as unknown as ACMESolver]));
    assert.equal(broken?.reason, 'InvalidSolverConfig', JSON.stringify(rfc2136));
    assert.equal(broken?.message, 'solvers[0].dns01: rfc2136 needs tsigKeyName and tsigSecretSecretRef: certsmith only sends TSIG-signed updates');
  }
});

test('an Issuer with only HTTP-01 solvers is not flagged', async () => {
  assert.equal(await brokenSolver(ctx, issuerWith([{ http01: { ingress: {} } } as ACMESolver])), undefined);
});

test('a credential with a line break or control character inside is a config error naming the Secret and key, never the value (an HTTP header would quote it into Events)', async () => {
  const { openSqliteStore } = await import('../../../store/sqlite/index.ts');
  const { SecretType } = await import('../../../api/resources.ts');
  const store = openSqliteStore({ path: ':memory:' });
  try {
    const le = { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'le' }, spec: {} };
    const withStore = { options: {}, store, informers: { informerFor: () => ({ get: () => le }) } } as unknown as ControllerContext;
    const token = 'SUPERSECRET-cf-token-0123456789';
    for (const [what, value] of [['a line break', `${token}\nsecond-line`], ['a NUL', `${token}\0`], ['a tab', `${token}\tx`], ['a non-ASCII letter', `${token}é`]] as const) {
      await store.delete(SecretType, 'cert-manager', 'cf').catch(() => undefined);
      await store.create(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'cf', namespace: 'cert-manager' }, type: 'Opaque', data: { token: Buffer.from(value).toString('base64') } });
      for (const solver of [
        { dns01: { cloudflare: { apiTokenSecretRef: { name: 'cf', key: 'token' } } } },
        { dns01: { digitalocean: { tokenSecretRef: { name: 'cf', key: 'token' } } } },
      ] as unknown as ACMESolver[]) {
        const broken = await brokenSolver(withStore, issuerWith([solver]));
        assert.equal(broken?.reason, 'InvalidSolverConfig', `${what}: ${JSON.stringify(broken)}`);
        assert.match(broken!.message, /secret "cert-manager\/cf" key "token" holds a control character/);
        assert.ok(!broken!.message.includes('SUPERSECRET'), broken!.message);
      }
    }
  } finally {
    await store.close();
  }
});
