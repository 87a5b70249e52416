// The Challenge solver for `dns01.webhook` (any group but certsmith.io's exec hook): Present and
// CleanUp go to the solver named by groupName/solverName through the Kubernetes API's
// aggregation (dns01/webhook.ts), with the fields cert-manager fills in: the resolved FQDN and
// zone (with trailing dots), the namespace its Secrets are read from, and whether ambient
// credentials are allowed (cert-manager's --cluster-issuer-ambient-credentials and
// --issuer-ambient-credentials: ClusterIssuers only by default).
import type { Challenge } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';
import type { ChallengeSolver } from './solver.ts';
import { issuerResourceNamespace, lookupIssuer } from '../../../shared/issuer-lookup.ts';
import { findZone } from '../../../shared/dns01-selfcheck.ts';
import { challengeRecordName, recursiveNameservers } from './dns01/challenge-record.ts';
import { checkTXT } from './dns01/txt-check.ts';
import { callWebhookSolver, challengeRequest, type ChallengeRequest } from './dns01/webhook.ts';
import { ProviderConfigError } from './dns01/secret-ref.ts';
import { ambientCredentialsAllowed } from './ambient-credentials.ts';

export function webhookSolver(ctx: ControllerContext, c: Challenge): ChallengeSolver {
  const cfg = c.spec.solver.dns01!.webhook!;
  async function request(action: ChallengeRequest['action']): Promise<ChallengeRequest> {
    const issuer = lookupIssuer(ctx, c.metadata.namespace, c.spec.issuerRef);
    if (!issuer) throw new Error(`issuer "${c.spec.issuerRef.name}" not found`);
    const fqdn = await challengeRecordName(ctx, c);
    return challengeRequest({
      action, type: 'dns-01', dnsName: c.spec.dnsName, key: c.spec.key,
      resourceNamespace: issuerResourceNamespace(ctx, issuer),
      resolvedFQDN: `${fqdn}.`, resolvedZone: `${await findZone(fqdn, recursiveNameservers(ctx))}.`,
      allowAmbientCredentials: ambientCredentialsAllowed(ctx, c.spec.issuerRef.kind),
      ...(cfg.config !== undefined ? { config: cfg.config } : {}),
    });
  }
  async function call(action: ChallengeRequest['action']): Promise<void> {
    const api = ctx.options.aggregatedAPI;
    if (!api) throw new ProviderConfigError('webhook: this controller has no Kubernetes API to reach webhook solvers through');
    await callWebhookSolver(api, cfg.groupName, cfg.solverName, await request(action));
  }
  return {
    present: () => call('Present'),
    check: () => checkTXT(ctx, c),
    cleanUp: () => call('CleanUp'),
  };
}
