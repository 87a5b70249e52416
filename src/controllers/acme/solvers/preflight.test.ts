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

test('an Issuer with only HTTP-01 solvers is not flagged', async () => {
  assert.equal(await brokenSolver(ctx, issuerWith([{ http01: { ingress: {} } } as ACMESolver])), undefined);
});
