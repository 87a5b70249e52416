// Order and Challenge (acme.cert-manager.io): an issuerRef, a Challenge's solver, and a spec
// that never changes after creation.
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../meta.ts';
import { isObj, type Errors } from './field-errors.ts';
import { validateIssuerRef } from './issuer-ref.ts';
import { validateSolver } from './issuer.ts';

export function validateOrder(obj: KubeObject, old: KubeObject | undefined, errs: Errors): void {
  const spec = isObj(obj.spec) ? obj.spec : undefined;
  if (spec) validateIssuerRef(spec.issuerRef, 'spec.issuerRef', errs);
  specImmutable(obj, old, errs);
}

export function validateChallenge(obj: KubeObject, old: KubeObject | undefined, errs: Errors): void {
  const spec = isObj(obj.spec) ? obj.spec : undefined;
  if (spec) {
    validateIssuerRef(spec.issuerRef, 'spec.issuerRef', errs);
    if (isObj(spec.solver)) validateSolver(spec.solver, 'spec.solver', errs);
  }
  specImmutable(obj, old, errs);
}

function specImmutable(obj: KubeObject, old: KubeObject | undefined, errs: Errors): void {
  const spec = isObj(obj.spec) ? obj.spec : undefined;
  const oldSpec = old && isObj(old.spec) ? old.spec : undefined;
  if (old && !isDeepStrictEqual(spec, oldSpec)) errs.forbidden('spec', 'field is immutable');
}
