// Issuing: when the request for the next revision has an outcome, either writes the Secret and
// bumps status.revision, or records the failure (lastFailureTime, issuanceAttempts) for backoff.
// While the request is pending, a Certificate that asks for it gets a temporary certificate.
import { getCondition, isTrue, rfc3339, setCondition, removeCondition } from '../../../api/conditions.ts';
import type { Condition } from '../../../api/meta.ts';
import { ISSUE_TEMPORARY_CERTIFICATE_ANNOTATION } from '../../../api/annotations.ts';
import { keyMatchesSpec, publicKeyFingerprint } from '../../../pki/keys.ts';
import { type Certificate as CertificateObj, type CertificateRequest as CertificateRequestObj, type CertificateStatus } from '../../../api/types.ts';
import { type Secret } from '../../../api/meta.ts';
import { failedAttemptsOf } from '../../../shared/backoff.ts';
import { isDeleting } from '../../../shared/ownership.ts';
import { decodeBase64, parseCertMemo, parseKeyMemo, requestCSR } from '../../../shared/parse-memo.ts';
import { firstViolation, requestMismatches, temporaryCertificatePolicies } from '../policies.ts';
import { isFromEarlierAttempt } from '../requestmanager/requestmanager.ts';
import { nextRevision, revisionOf } from '../../../shared/revisions.ts';
import { keySpecOf } from '../../../shared/certificate-template.ts';
import type { EventSpec } from '../../decision.ts';

export interface IssuingInput {
  certificate: CertificateObj;
  nextKeySecret?: Secret;
  requests: CertificateRequestObj[];
  /** the target Secret (spec.secretName), when it exists */
  secret?: Secret;
}

export type IssuingDecision =
  | { kind: 'wait' }
  | { kind: 'fail'; status: CertificateStatus; event: EventSpec }
  | { kind: 'issue'; request: CertificateRequestObj; keyPem: string; revision: number }
  /** write a temporary certificate for the next key into the target Secret; status stays as it is */
  | { kind: 'temporary'; keyPem: string };

const WAIT: IssuingDecision = { kind: 'wait' };

export function decideIssuing(input: IssuingInput, now: Date): IssuingDecision {
  const crt = input.certificate;
  if (isDeleting(crt) || !isTrue(crt.status?.conditions, 'Issuing')) return WAIT;
  const keyPem = decodeBase64(input.nextKeySecret?.data?.['tls.key']);
  if (!crt.status?.nextPrivateKeySecretName || !keyPem) return WAIT;
  const key = parseKeyMemo(keyPem);
  if (!key.value || !keyMatchesSpec(key.value, keySpecOf(crt.spec))) return WAIT;

  const rev = nextRevision(crt);
  const candidates = input.requests.filter((cr) => revisionOf(cr) === rev);
  if (candidates.length !== 1) return WAIT;
  const cr = candidates[0];
  const csr = requestCSR(cr);
  if (!csr.value || requestMismatches(crt, cr)?.length || csr.value.publicKeyFingerprint !== publicKeyFingerprint(key.value)) return WAIT;
  // An outcome from an earlier attempt was counted already; the request manager replaces it.
  if (isFromEarlierAttempt(crt, cr)) return WAIT;

  const conds = cr.status?.conditions;
  const denied = getCondition(conds, 'Denied');
  if (denied?.status === 'True') return fail(crt, denied, now);
  const invalid = getCondition(conds, 'InvalidRequest');
  if (invalid?.status === 'True') return fail(crt, invalid, now);
  const ready = getCondition(conds, 'Ready');
  if (!ready) return WAIT;
  if (ready.reason === 'Failed') return fail(crt, ready, now);
  if (ready.reason !== 'Issued') {
    // Only a Secret without a usable pair gets one: a renewal keeps serving the old certificate.
    const wantsTemporary = crt.metadata.annotations?.[ISSUE_TEMPORARY_CERTIFICATE_ANNOTATION] === 'true';
    if (wantsTemporary && firstViolation(temporaryCertificatePolicies, { certificate: crt, secret: input.secret })) return { kind: 'temporary', keyPem };
    return WAIT;
  }

  const chainPem = decodeBase64(cr.status?.certificate);
  const leaf = parseCertMemo(chainPem);
  const invalidCert = (message: string) => fail(crt, { type: 'Ready', status: 'False', reason: 'InvalidCertificate', message }, now);
  if (!leaf.value) return invalidCert(`Issuer returned an invalid certificate: failed to decode: ${leaf.error}`);
  if (leaf.value.publicKeyFingerprint !== csr.value.publicKeyFingerprint) {
    return invalidCert('Issuer returned a certificate with a public key that does not match the CSR. This usually indicates a misconfigured issuer.');
  }
  if (now.getTime() > leaf.value.notAfter.getTime()) {
    return invalidCert(`Issuer returned an already expired certificate (notAfter: ${rfc3339(leaf.value.notAfter)}). This usually indicates an expired CA certificate in the issuer.`);
  }
  return { kind: 'issue', request: cr, keyPem, revision: rev };
}

function fail(crt: CertificateObj, cond: Condition, now: Date): IssuingDecision {
  return { kind: 'fail', ...failedIssuance(crt, cond.reason || 'Failed', `The certificate request has failed to complete and will be retried: ${cond.message ?? ''}`, now) };
}

/**
 * Ends the current issuance as failed: Issuing=False, lastFailureTime and the attempt counter
 * that the trigger's backoff reads. Also used by the request manager when no request can be
 * built, so that failure is retried with the same backoff instead of on every reconcile.
 */
export function failedIssuance(crt: CertificateObj, reason: string, message: string, now: Date): { status: CertificateStatus; event: EventSpec } {
  const status: CertificateStatus = {
    ...(crt.status ?? {}),
    lastFailureTime: rfc3339(now),
    issuanceAttempts: failedAttemptsOf(crt.status) + 1,
    conditions: setCondition(crt.status?.conditions, { type: 'Issuing', status: 'False', reason, message, observedGeneration: crt.metadata.generation }, now),
  };
  delete status.failedIssuanceAttempts;
  return { status, event: { type: 'Warning', reason, message } };
}

/** Status after a successful issuance, before readiness fields are merged in. */
export function issuedStatus(crt: CertificateObj, revision: number): CertificateStatus {
  const status: CertificateStatus = { ...(crt.status ?? {}), revision, conditions: removeCondition(crt.status?.conditions, 'Issuing') };
  delete status.lastFailureTime;
  delete status.issuanceAttempts;
  delete status.failedIssuanceAttempts;
  delete status.nextPrivateKeySecretName;
  return status;
}
