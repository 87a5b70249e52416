// Solvers that reach the user's own web and DNS servers (issue 14), chosen before the built-in
// ones in challenges/solvers.ts: the webroot for HTTP-01 when the server is configured with one.
// Returns undefined when the Challenge is for a built-in solver.
import type { Challenge } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';
import type { ChallengeSolver } from '../challenges/solvers.ts';
import { selfCheckHTTP01 } from './http01.ts';
import { cleanUpWebroot, presentWebroot } from './webroot.ts';

function webrootSolver(ctx: ControllerContext, root: string, c: Challenge): ChallengeSolver {
  return {
    async present() {
      await presentWebroot(root, c.spec.token, c.spec.key);
    },
    async check() {
      // the user's web server answers on the port the CA connects to: 80, unless a test routes it elsewhere
      const port = ctx.options.acmeHTTP01SelfCheckPort ?? 80;
      return selfCheckHTTP01({ dnsName: c.spec.dnsName, token: c.spec.token, keyAuth: c.spec.key, port, nameservers: ctx.options.acmeHTTP01SolverNameservers });
    },
    async cleanUp() {
      await cleanUpWebroot(root, c.spec.token);
    },
  };
}

export function providerSolver(ctx: ControllerContext, c: Challenge): ChallengeSolver | undefined {
  if (c.spec.type === 'HTTP-01') {
    const root = ctx.options.acmeHTTP01Webroot;
    if (root && ctx.options.http01Mode !== 'kubernetes') return webrootSolver(ctx, root, c);
    return undefined;
  }
  return undefined;
}
