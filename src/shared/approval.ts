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

export function approve(conditions: Condition[] | undefined, now: Date, reason = APPROVER_REASON, message = APPROVED_MESSAGE): Condition[] {
  return setCondition(conditions, { type: 'Approved', status: 'True', reason, message }, now);
}

export function deny(conditions: Condition[] | undefined, now: Date, reason: string, message: string): Condition[] {
  return setCondition(conditions, { type: 'Denied', status: 'True', reason, message }, now);
}
