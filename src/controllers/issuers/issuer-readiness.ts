// Readiness of SelfSigned and CA issuers, and the refusal of Vault and Venafi ones (ACME issuers
// are registered by the ACME controllers).
import { setCondition } from '../../api/conditions.ts';
import type { Condition } from '../../api/meta.ts';
import type { Secret } from '../../api/meta.ts';
import { decodeBase64, parseCertMemo, parseKeyMemo } from '../../shared/parse-memo.ts';
import { publicKeyFingerprint } from '../../pki/keys.ts';
import { caChainProblem } from '../requests/signers.ts';
import type { IssuerView } from '../requests/signing.ts';
import type { EventSpec } from '../decision.ts';
import { UNSUPPORTED_ISSUER_REASON, issuerTypeOf, unsupportedIssuerMessage } from '../requests/signing.ts';

export function decideIssuerReady(issuer: IssuerView, caSecret: Secret | undefined, now: Date): Condition[] | undefined {
  const type = issuerTypeOf(issuer);
  const gen = issuer.metadata.generation;
  let next: Omit<Condition, 'lastTransitionTime'>;
  const unsupported = unsupportedIssuerMessage(type);
  if (unsupported) {
    next = { type: 'Ready', status: 'False', reason: UNSUPPORTED_ISSUER_REASON, message: unsupported, observedGeneration: gen };
  } else if (type === 'selfSigned') {
    next = { type: 'Ready', status: 'True', reason: 'IsReady', message: '', observedGeneration: gen };
  } else if (type === 'ca') {
    const name = issuer.spec!.ca!.secretName;
    const certPem = decodeBase64(caSecret?.data?.['tls.crt']);
    const keyPem = decodeBase64(caSecret?.data?.['tls.key']);
    const cert = certPem ? parseCertMemo(certPem).value : undefined;
    const key = keyPem ? parseKeyMemo(keyPem).value : undefined;
    const notCertificates = caChainProblem(caSecret);
    if (!caSecret) {
      next = { type: 'Ready', status: 'False', reason: 'ErrGetKeyPair', message: `Error getting keypair for CA issuer: secrets "${name}" not found`, observedGeneration: gen };
    } else if (!cert || !key) {
      next = { type: 'Ready', status: 'False', reason: 'ErrInvalidKeyPair', message: `Error getting keypair for CA issuer: secret "${name}" does not hold a valid PEM tls.crt and tls.key`, observedGeneration: gen };
    } else if (notCertificates) {
      next = { type: 'Ready', status: 'False', reason: 'ErrInvalidKeyPair', message: `Error getting keypair for CA issuer: ${notCertificates}`, observedGeneration: gen };
    } else if (publicKeyFingerprint(key) !== cert.publicKeyFingerprint) {
      next = { type: 'Ready', status: 'False', reason: 'ErrInvalidKeyPair', message: `Error getting keypair for CA issuer: the private key in secret "${name}" does not match its certificate`, observedGeneration: gen };
    } else if (!cert.isCA) {
      next = { type: 'Ready', status: 'False', reason: 'ErrInvalidKeyPair', message: 'Error getting keypair for CA issuer: certificate is not a CA', observedGeneration: gen };
    } else {
      next = { type: 'Ready', status: 'True', reason: 'KeyPairVerified', message: 'Signing CA verified', observedGeneration: gen };
    }
  } else {
    return undefined;
  }
  const conds = setCondition(issuer.status?.conditions, next, now);
  return JSON.stringify(conds) === JSON.stringify(issuer.status?.conditions ?? []) ? undefined : conds;
}

/**
 * The Event for a CA issuer whose Ready condition changed (status, reason or message), as
 * cert-manager's CA issuer records KeyPairVerified, ErrGetKeyPair and ErrInvalidKeyPair; told once
 * per change, where cert-manager repeats it at every sync and its recorder counts the repeats.
 */
export function issuerReadyEvent(issuer: IssuerView, conditions: Condition[] | undefined): EventSpec | undefined {
  if (!conditions || issuerTypeOf(issuer) !== 'ca') return undefined;
  const was = issuer.status?.conditions?.find((c) => c.type === 'Ready');
  const now = conditions.find((c) => c.type === 'Ready');
  if (!now || (was && was.status === now.status && was.reason === now.reason && was.message === now.message)) return undefined;
  return { type: now.status === 'True' ? 'Normal' : 'Warning', reason: now.reason ?? '', message: now.message ?? '' };
}
