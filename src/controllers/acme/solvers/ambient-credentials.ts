// Ambient credentials for DNS-01 providers: the host's or pod's own cloud identity (AWS default
// chain, Google application default credentials, Azure managed identity), used when the solver
// names no credentials of its own.
import type { ControllerContext } from '../../context.ts';
import { ProviderConfigError } from './dns01/secret-ref.ts';

/**
 * Whether an issuer of this kind may use ambient credentials (the host's or pod's AWS, Google or
 * Azure identity), as cert-manager's flags say: --cluster-issuer-ambient-credentials (default
 * true) and --issuer-ambient-credentials (default false: a namespaced Issuer must not borrow the
 * controller's own identity unless the operator says so).
 */
export function ambientCredentialsAllowed(ctx: Pick<ControllerContext, 'options'>, kind: string | undefined): boolean {
  return kind === 'ClusterIssuer' ? ctx.options.clusterIssuerAmbientCredentials !== false : ctx.options.issuerAmbientCredentials === true;
}

/** Why ambient credentials were refused, naming the flag that would allow them; `what` ends in its verb ("managed identity is"). */
export function ambientRefused(kind: string | undefined, needs: string, what: string): ProviderConfigError {
  return kind === 'ClusterIssuer'
    ? new ProviderConfigError(`${needs}; ${what} not used for ClusterIssuers: --cluster-issuer-ambient-credentials is false`)
    : new ProviderConfigError(`${needs}; ${what} used for ClusterIssuers only, unless the controller runs with --issuer-ambient-credentials`);
}

