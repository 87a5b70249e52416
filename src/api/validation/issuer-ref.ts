// issuerRef, as Certificates, CertificateRequests, Orders and Challenges carry it.
import { child, isObj, isStr, type Errors } from './field-errors.ts';

export function validateIssuerRef(ref: unknown, path: string, errs: Errors): void {
  if (!isObj(ref)) {
    errs.required(child(path, 'name'), 'must be specified');
    return;
  }
  if (!isStr(ref.name) || ref.name === '') errs.required(child(path, 'name'), 'must be specified');
  const group = isStr(ref.group) ? ref.group : '';
  const kind = isStr(ref.kind) ? ref.kind : '';
  if ((group === '' || group === 'cert-manager.io') && !['', 'Issuer', 'ClusterIssuer'].includes(kind)) {
    errs.invalid(child(path, 'kind'), kind, 'must be one of Issuer or ClusterIssuer' + (group === '' ? ' (did you forget to set spec.issuerRef.group?)' : ''));
  }
}
