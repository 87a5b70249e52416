// The Order's HTTP-01 ingress overrides, as cert-manager applies them when it builds a Challenge:
// annotations that ingress-shim puts on a Certificate (and that reach the Order through its
// CertificateRequest) replace the picked solver's ingress name or class for this Order only.
import type { ACMESolver } from '../../../api/types.ts';
import { HTTP01OverrideAnnotation } from '../../../api/annotations.ts';

export const HTTP01_OVERRIDE = HTTP01OverrideAnnotation;

/**
 * solver with its http01.ingress pointed where the annotations say; solvers without an ingress
 * (DNS-01, Gateway API) are returned as they are. The three fields exclude each other, so one
 * override clears the other two; when several are set the edit-in-place name wins, because the
 * user's own Ingress is the only one certain to be routed.
 */
export function withHTTP01Overrides(solver: ACMESolver, annotations: Record<string, string> = {}): ACMESolver {
  const ingress = solver.http01?.ingress;
  if (!ingress) return solver;
  const name = annotations[HTTP01_OVERRIDE.ingressName];
  const className = annotations[HTTP01_OVERRIDE.ingressClassName];
  const cls = annotations[HTTP01_OVERRIDE.ingressClass];
  const override = name ? { name } : className ? { ingressClassName: className } : cls ? { class: cls } : undefined;
  if (!override) return solver;
  const { name: _n, class: _c, ingressClassName: _i, ...rest } = ingress;
  return { ...solver, http01: { ...solver.http01, ingress: { ...rest, ...override } } };
}
