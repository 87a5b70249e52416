// Trigger: decides that a Certificate needs issuing and says so with Issuing=True; never
// acts while Issuing is already True (a person may have set it to force issuance).
import { getCondition, isoTime, setCondition } from '../../../api/conditions.ts';
import type { Condition } from '../../../api/meta.ts';
import { BACKOFF_EVENT_REASON, backoffEventMessage, failedAttemptsOf, nextAttemptTime, spreadsRetries, type BackoffConfig } from '../../../shared/backoff.ts';
import { isDeleting } from '../../../shared/ownership.ts';
import { firstViolation, requestMismatches, secretCertificate, secretPolicies, type CertificateInput, type Violation } from '../policies.ts';
import { renewalFor } from '../../../shared/renewal/renewal-decision.ts';
import { issuanceTimeOf } from '../../../shared/renewal/min-interval.ts';
import type { EventSpec } from '../../decision.ts';

export interface TriggerInput extends CertificateInput {
  /** false when another Certificate owns the same secretName */
  isSecretOwner: boolean;
  /** how many Certificates in the cache recorded a failure in the same minute as this one */
  failuresInSameMinute: number;
}

export interface TriggerDecision {
  /** the new status.conditions when issuance starts */
  conditions?: Condition[];
  violation?: Violation;
  requeueAfterMs?: number;
  events: EventSpec[];
}

const NOT_OWNER_RECHECK_MS = 3 * 60_000;

export function decideTrigger(input: TriggerInput, now: Date, backoff: BackoffConfig): TriggerDecision {
  const crt = input.certificate;
  if (isDeleting(crt)) return { events: [] };
  if (getCondition(crt.status?.conditions, 'Issuing')?.status === 'True') return { events: [] };
  if (!input.isSecretOwner) return { events: [], requeueAfterMs: NOT_OWNER_RECHECK_MS };

  const wait = backoffWait(input, now, backoff);
  if (wait) return wait;

  let violation = firstViolation(secretPolicies, input);
  let requeueAfterMs: number | undefined;
  if (!violation) {
    const leaf = secretCertificate(input.secret)!;
    // The renewal time includes the minimum interval between issuances (min-interval.ts): the
    // only reason held back is this time-driven one; every reason above is a user's doing.
    const renewal = renewalFor(crt, leaf, issuanceTimeOf(leaf, input.currentCR));
    if (renewal.kind === 'scheduled') {
      const due = renewal.renewalTime.getTime() - now.getTime();
      if (due <= 0) {
        violation = { reason: 'Renewing', message: `Renewing certificate as renewal was scheduled at ${isoTime(renewal.renewalTime)}` };
      } else {
        requeueAfterMs = due;
      }
    }
  }
  if (!violation) return { events: [], requeueAfterMs };
  const conditions = setCondition(crt.status?.conditions, {
    type: 'Issuing', status: 'True', reason: violation.reason, message: violation.message, observedGeneration: crt.metadata.generation,
  }, now);
  return { conditions, violation, events: [{ type: 'Normal', reason: 'Issuing', message: violation.message }] };
}

function backoffWait(input: TriggerInput, now: Date, cfg: BackoffConfig): TriggerDecision | undefined {
  const status = input.certificate.status;
  if (!status?.lastFailureTime) return undefined;
  // The user changed the spec since the failed request: retry now, the failure may be fixed.
  if (input.nextCR && requestMismatches(input.certificate, input.nextCR)?.length) return undefined;
  // The same when the failure left no request to compare (no CSR could be built from the spec):
  // the failed Issuing condition records the generation it saw, and a spec change bumps it.
  const failed = getCondition(status.conditions, 'Issuing');
  const generation = input.certificate.metadata.generation;
  if (failed?.status === 'False' && failed.observedGeneration !== undefined && generation !== undefined && failed.observedGeneration < generation) return undefined;
  const attempts = failedAttemptsOf(status) || undefined;
  // The certificate still in use bounds the wait: a retry always comes before it would expire
  // without another attempt (backoff.ts expiryBoundedDelay).
  const notAfter = input.secret ? secretCertificate(input.secret)?.notAfter : undefined;
  // a failure dated after now means the wall clock was stepped back since: wait the delay from now,
  // not the length of the step as well
  const lastFailureTime = new Date(Math.min(Date.parse(status.lastFailureTime), now.getTime()));
  const next = nextAttemptTime({
    lastFailureTime, attempts, uid: input.certificate.metadata.uid ?? '', cfg,
    spread: spreadsRetries(input.failuresInSameMinute), ...(notAfter ? { notAfter } : {}),
  });
  const left = next.getTime() - now.getTime();
  if (left <= 0) return undefined;
  const at = isoTime(next);
  return {
    requeueAfterMs: left,
    events: [{ type: 'Normal', reason: BACKOFF_EVENT_REASON, message: backoffEventMessage(attempts ?? 1, at) }],
  };
}
