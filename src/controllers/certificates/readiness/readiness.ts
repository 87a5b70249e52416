// Readiness: keeps Ready, notBefore/notAfter/renewalTime and the renewal status of a
// Certificate in line with its Secret. The issuing controller computes the same status at the
// moment it writes a Secret, so a fresh issuance costs one status write, not two.
import { removeCondition, rfc3339, setCondition } from '../../../api/conditions.ts';
import type { Condition } from '../../../api/meta.ts';
import type { Certificate as CertificateObj, CertificateStatus } from '../../../api/types.ts';
import { firstViolation, secretCertificate, secretPolicies, type CertificateInput } from '../policies.ts';
import { renewalFor } from '../../../shared/renewal/renewal-decision.ts';
import { issuanceTimeOf } from '../../../shared/renewal/min-interval.ts';
import type { RenewalDecision } from '../../../shared/renewal/renewal-time.ts';

export type ReadinessFields = Pick<CertificateStatus, 'conditions' | 'notBefore' | 'notAfter' | 'renewalTime' | 'renewal'>;

export interface ReadinessDecision {
  fields: ReadinessFields;
  renewal?: RenewalDecision;
}

export function decideReadiness(input: CertificateInput, now: Date): ReadinessDecision {
  const crt = input.certificate;
  const gen = crt.metadata.generation;
  let conditions = crt.status?.conditions;
  const leaf = secretCertificate(input.secret);
  const violation = firstViolation(secretPolicies, input) ??
    (leaf && now.getTime() > leaf.notAfter.getTime()
      ? { reason: 'Expired', message: `Certificate expired on ${leaf.notAfter.toUTCString()}` }
      : undefined);
  conditions = setCondition(conditions, violation
    ? { type: 'Ready', status: 'False', reason: violation.reason, message: violation.message, observedGeneration: gen }
    : { type: 'Ready', status: 'True', reason: 'Ready', message: 'Certificate is up to date and has not expired', observedGeneration: gen }, now);

  const policy = crt.spec.renewal?.policy ?? 'RenewBefore';
  const hasWindows = !!crt.spec.renewal?.windows?.length;
  const fields: ReadinessFields = { notBefore: undefined, notAfter: undefined, renewalTime: undefined };
  let renewal: RenewalDecision | undefined;
  conditions = removeCondition(removeCondition(removeCondition(conditions, 'RenewalDisabled'), 'RenewalConfigInvalid'), 'RenewalWindow');
  if (leaf) {
    fields.notBefore = rfc3339(leaf.notBefore);
    fields.notAfter = rfc3339(leaf.notAfter);
    renewal = renewalFor(crt, leaf, issuanceTimeOf(leaf, input.currentCR));
    if (renewal.kind === 'scheduled') fields.renewalTime = rfc3339(renewal.renewalTime);
  } else {
    renewal = undefined;
  }
  const old = crt.status?.conditions;
  const keep = (type: string, next: Omit<Condition, 'lastTransitionTime'>) => setCondition(old?.filter((c) => c.type === type), next, now)[0];
  const extra: Condition[] = [];
  if (policy === 'Disabled') {
    extra.push(keep('RenewalDisabled', {
      type: 'RenewalDisabled', status: 'True', reason: 'Disabled', observedGeneration: gen,
      message: `Automatic renewal is disabled by spec.renewal.policy; to renew manually run: certsmith renew ${crt.metadata.name} -n ${crt.metadata.namespace}`,
    }));
  }
  if (renewal?.kind === 'invalid') {
    extra.push(keep('RenewalConfigInvalid', { type: 'RenewalConfigInvalid', status: 'True', reason: 'InvalidWindow', message: `${renewal.message}; no renewal is scheduled until this is fixed`, observedGeneration: gen }));
  }
  if (renewal?.kind === 'scheduled' && hasWindows) {
    extra.push(keep('RenewalWindow', {
      type: 'RenewalWindow', status: renewal.reason === 'ExpiryImminent' ? 'False' : 'True', reason: renewal.reason,
      message: renewal.message, observedGeneration: gen,
    }));
  }
  fields.conditions = [...conditions, ...extra];
  if (policy !== 'RenewBefore' || hasWindows) {
    fields.renewal = { policy, ...(hasWindows ? { windows: { valid: renewal?.kind !== 'invalid', ...(renewal?.kind === 'invalid' ? { message: renewal.message } : {}) } } : {}) };
  }
  return { fields, renewal };
}

/** Whether writing these fields would change the stored status. */
export function readinessChanged(status: CertificateStatus | undefined, fields: ReadinessFields): boolean {
  const s = status ?? {};
  return JSON.stringify([s.conditions ?? [], s.notBefore, s.notAfter, s.renewalTime, s.renewal]) !==
    JSON.stringify([fields.conditions ?? [], fields.notBefore, fields.notAfter, fields.renewalTime, fields.renewal]);
}

export function withReadiness(crt: CertificateObj, fields: ReadinessFields): CertificateStatus {
  const status: CertificateStatus = { ...(crt.status ?? {}), ...fields };
  for (const k of ['notBefore', 'notAfter', 'renewalTime', 'renewal'] as const) if (status[k] === undefined) delete status[k];
  return status;
}
