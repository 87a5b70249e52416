import type { AcmeAuthorization, AcmeChallenge, AcmeClient } from '../../src/acme/client.ts';

export interface ChallengeSolver {
  type: 'http-01' | 'dns-01';
  present(authz: AcmeAuthorization, challenge: AcmeChallenge): Promise<void>;
  cleanUp(authz: AcmeAuthorization, challenge: AcmeChallenge): Promise<void>;
}

/**
 * The whole order flow with one client, for tests and benchmarks: order, solve every pending authorization
 * with the given solver, finalize, download. Challenges are cleaned up whether or not validation succeeds.
 */
export async function issueCertificate(
  client: AcmeClient,
  opts: { dnsNames: string[]; csrDer: Buffer; solver: ChallengeSolver; preferredChain?: string },
): Promise<string> {
  const order = await client.createOrder({ identifiers: opts.dnsNames });
  await Promise.all(
    order.authorizations.map(async (authzUrl) => {
      const authz = await client.getAuthorization(authzUrl);
      if (authz.status === 'valid') return;
      const challenge = authz.challenges.find((c) => c.type === opts.solver.type);
      if (!challenge) throw new Error(`authorization for ${authz.identifier.value} offers no ${opts.solver.type} challenge`);
      await opts.solver.present(authz, challenge);
      try {
        await client.respondChallenge(challenge.url);
        await client.waitForAuthorization(authzUrl);
      } finally {
        await opts.solver.cleanUp(authz, challenge);
      }
    }),
  );
  const finalized = await client.finalizeOrder(order.finalize, opts.csrDer, { orderUrl: order.url });
  if (!finalized.certificate) throw new Error(`order ${order.url} is ${finalized.status} without a certificate URL`);
  return client.downloadCertificate(finalized.certificate, { preferredChain: opts.preferredChain });
}
