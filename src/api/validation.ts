// Admission validation for the cert-manager kinds: structural errors from the schema plus the
// rules of cert-manager's validating webhook (internal/apis/certmanager/validation, acme validation).
// Messages follow the webhook's where known; paths are Kubernetes field paths (`spec.dnsNames[2]`).
// This is the one entry point; each kind's rules live in validation/<kind>.ts.
import type { KubeObject } from './meta.ts';
import type { ResourceType } from './resources.ts';
import { Errors, isObj, type FieldError } from './validation/field-errors.ts';
import { validateChallenge, validateOrder } from './validation/acme.ts';
import { validateCertificateSpec } from './validation/certificate.ts';
import { validateCertificateRequest } from './validation/certificate-request.ts';
import { validateIssuerSpec } from './validation/issuer.ts';
import { validateMetadata, validateWellFormed } from './validation/metadata.ts';
import { mergeErrors, structuralErrors } from './validation/structural.ts';

export { fieldErrorText, invalidObjectMessage, type FieldError, type FieldErrorReason } from './validation/field-errors.ts';
export { findUnknownFields } from './validation/structural.ts';
export { dnsNameError, emailError, ipAddressError, uriError } from './validation/subject-alt-names.ts';

/**
 * Validates an object of `type` as the API server would on create (no `old`) or update.
 * Returns every error found, not just the first; an empty list means the object is accepted.
 */
export function validate(type: ResourceType, obj: KubeObject, old?: KubeObject): FieldError[] {
  const schemaErrors = structuralErrors(type, obj);
  const rules = new Errors();
  // Every string of a cert-manager object, keys included: a lone surrogate cannot be put in a
  // certificate, and a request built from one never matches its spec (issue 12, finding 2).
  if (type.group.endsWith('cert-manager.io')) validateWellFormed(obj, '', rules);
  validateMetadata(type, obj, rules);
  const spec = isObj(obj.spec) ? obj.spec : undefined;
  if (type.group === 'cert-manager.io') {
    switch (type.kind) {
      case 'Certificate': if (spec) validateCertificateSpec(spec, 'spec', rules); break;
      case 'CertificateRequest': validateCertificateRequest(obj, old, rules); break;
      case 'Issuer': case 'ClusterIssuer': if (spec) validateIssuerSpec(spec, 'spec', rules); break;
    }
  } else if (type.group === 'acme.cert-manager.io') {
    if (type.kind === 'Order') validateOrder(obj, old, rules);
    if (type.kind === 'Challenge') validateChallenge(obj, old, rules);
  }
  return mergeErrors(schemaErrors, rules.list);
}
