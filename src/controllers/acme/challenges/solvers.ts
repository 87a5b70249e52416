// Present, self-check and clean up one Challenge with the solver its spec names: HTTP-01 from the
// embedded responder or (http01Mode 'kubernetes') from a solver Pod, Service and Ingress; the
// webroot, exec hooks and DNS-01 providers come from solvers/providers.ts.
import type { Challenge } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';
import { selfCheckHTTP01 } from '../solvers/http01.ts';
import { kubernetesHTTP01Solver } from '../solvers/http01-kube/solver.ts';
import type { AcmeRuntime } from '../runtime.ts';
import { providerSolver } from '../solvers/providers.ts';
import type { ChallengeSolver } from '../solvers/solver.ts';

function http01Solver(ctx: ControllerContext, rt: AcmeRuntime, c: Challenge): ChallengeSolver {
  return {
    async present() {
      await (await rt.http01()).present(c.spec.token, c.spec.key, c.spec.dnsName);
    },
    async restore() {
      await (await rt.http01()).present(c.spec.token, c.spec.key, c.spec.dnsName);
    },
    async check() {
      const server = await rt.http01();
      // Tokens live in memory: after a restart a presented challenge must be served again.
      await server.present(c.spec.token, c.spec.key, c.spec.dnsName);
      // where the CA fetches it (port 80), not the listener's own port: behind a web server that
      // proxies the path to a private listener, only the web server's port shows what the CA will see
      return selfCheckHTTP01({ dnsName: c.spec.dnsName, token: c.spec.token, keyAuth: c.spec.key, port: ctx.options.acmeHTTP01SelfCheckPort ?? 80, nameservers: ctx.options.acmeHTTP01SolverNameservers });
    },
    async cleanUp() {
      await (await rt.http01()).cleanUp(c.spec.token);
    },
  };
}

/** Whether the Challenge is served by the in-process HTTP-01 responder, which dies with the process. */
export function usesEmbeddedResponder(ctx: ControllerContext, c: Challenge): boolean {
  return c.spec.type === 'HTTP-01' && ctx.options.http01Mode !== 'kubernetes' && !ctx.options.acmeHTTP01Webroot;
}

export function solverFor(ctx: ControllerContext, rt: AcmeRuntime, c: Challenge): ChallengeSolver {
  const own = providerSolver(ctx, c); // webroot, exec hook and DNS providers (issue 14)
  if (own) return own;
  if (c.spec.type === 'HTTP-01') {
    if (!c.spec.solver.http01) throw new Error('HTTP-01 challenge without an http01 solver');
    return ctx.options.http01Mode === 'kubernetes' ? kubernetesHTTP01Solver(ctx, c) : http01Solver(ctx, rt, c);
  }
  const dns01 = c.spec.solver.dns01;
  if (!dns01) throw new Error('DNS-01 challenge without a dns01 solver');
  const provider = Object.keys(dns01).find((k) => k !== 'cnameStrategy') ?? 'none';
  throw new Error(`DNS-01 provider "${provider}" is not supported by certsmith`);
}
