// Approval of CertificateRequests: the conditions cert-manager's approver writes, and the
// check every signer makes before it signs.
import { getCondition, isTrue, setCondition } from '../api/conditions.ts';
import type { Condition } from '../api/meta.ts';

export const APPROVER_REASON = 'cert-manager.io';
export const APPROVED_MESSAGE = 'Certificate request has been approved by cert-manager.io';

export type ApprovalState = 'approved' | 'denied' | 'pending';

export function approvalState(conditions: Condition[] | undefined): ApprovalState {
  if (isTrue(conditions, 'Denied')) return 'denied';
  if (isTrue(conditions, 'Approved')) return 'approved';
  return 'pending';
}

/** Whether the automatic approver should approve: nothing decided yet and not finished. */
export function needsAutoApproval(conditions: Condition[] | undefined): boolean {
  const ready = getCondition(conditions, 'Ready')?.reason;
  return approvalState(conditions) === 'pending' && ready !== 'Failed' && ready !== 'Issued';
}

/**
 * Whether certsmith's approver takes a pending request. A request whose issuer does not exist
 * is approved, as cert-manager's approver approves every request, and then reports
 * IssuerNotFound; one whose issuer exists but is of a type certsmith does not sign for
 * (`issuerServedElsewhere`) is left to that signer's approver.
 */
export function autoApproves(input: { autoApprove: boolean; issuerServedElsewhere: boolean; conditions: Condition[] | undefined }): boolean {
  return input.autoApprove && !input.issuerServedElsewhere && needsAutoApproval(input.conditions);
}

/**
 * cert-manager's install approves these signers by default (the Helm chart's approveSignerNames,
 * which grant its approver `approve` on them): requests for external issuers wait for an approver
 * that is granted theirs, such as approver-policy or a person.
 */
export const DEFAULT_APPROVE_SIGNER_NAMES = ['issuers.cert-manager.io/*', 'clusterissuers.cert-manager.io/*'];

/**
 * A request's signer name as cert-manager's approval check spells it: the issuer's resource and
 * group, then `<namespace>.<name>`, or `<name>` for a cluster-scoped issuer. The resource is the
 * lower-cased kind plus "s" (issuers, clusterissuers, stepissuers, awspcaclusterissuers), and a
 * kind ending in ClusterIssuer is cluster-scoped, as every known issuer names them: an external
 * issuer's CRD is not served here to look it up.
 */
export function signerName(ref: { name: string; kind?: string; group?: string }, namespace: string): string {
  const kind = ref.kind || 'Issuer';
  const resource = `${kind.toLowerCase()}s.${ref.group || 'cert-manager.io'}`;
  return kind.endsWith('ClusterIssuer') ? `${resource}/${ref.name}` : `${resource}/${namespace}.${ref.name}`;
}

/**
 * Whether the approver may approve a request for this issuer: one of the names is its signer
 * name, or `<resource>.<group>/*` for its resource; an empty list approves every issuer.
 */
export function signerNamesApprove(names: readonly string[], ref: { name: string; kind?: string; group?: string }, namespace: string): boolean {
  if (!names.length) return true;
  const signer = signerName(ref, namespace);
  const resource = signer.slice(0, signer.indexOf('/'));
  return names.some((n) => n === signer || n === `${resource}/*`);
}

export function approve(conditions: Condition[] | undefined, now: Date, reason = APPROVER_REASON, message = APPROVED_MESSAGE): Condition[] {
  return setCondition(conditions, { type: 'Approved', status: 'True', reason, message }, now);
}

export function deny(conditions: Condition[] | undefined, now: Date, reason: string, message: string): Condition[] {
  return setCondition(conditions, { type: 'Denied', status: 'True', reason, message }, now);
}
