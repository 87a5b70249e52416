// An ACME Issuer naming a DNS-01 provider certsmith has no solver for is not Ready at once, with
// a reason and message naming the provider (issue 15: it was accepted and silently ignored).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { brokenSolver } from './preflight.ts';
import type { ACMESolver } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';

// the unimplemented-provider check reads nothing: a context with no store or options suffices
const ctx = { options: {} } as unknown as ControllerContext;
const issuerWith = (solvers: ACMESolver[]) => ({ kind: 'ClusterIssuer', metadata: { name: 'le' }, spec: { acme: { solvers } } });

test('an akamai DNS-01 solver makes the Issuer Ready=False naming the provider and the solver', async () => {
  const akamai = { dns01: { akamai: { serviceConsumerDomain: 'x', clientTokenSecretRef: { name: 'a', key: 'b' } } } } as unknown as ACMESolver;
  const broken = await brokenSolver(ctx, issuerWith([{ http01: { ingress: {} } } as ACMESolver, akamai]));
  assert.equal(broken?.reason, 'UnsupportedDNS01Provider');
  assert.match(broken?.message ?? '', /^solvers\[1\]\.dns01\.akamai: certsmith does not implement the akamai DNS-01 provider; use /);
});

test('an Issuer with only HTTP-01 solvers is not flagged', async () => {
  assert.equal(await brokenSolver(ctx, issuerWith([{ http01: { ingress: {} } } as ACMESolver])), undefined);
});
