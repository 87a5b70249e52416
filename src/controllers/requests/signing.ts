// The generic CertificateRequest flow shared by the SelfSigned and CA signers (cert-manager's
// certificaterequests sync): approval gate, issuer readiness, sign once, report.
import { getCondition, isTrue, rfc3339, setCondition } from '../../api/conditions.ts';
import type { CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import type { EventSpec } from '../decision.ts';
import { APPROVED_MESSAGE, APPROVER_REASON, DEFAULT_APPROVE_SIGNER_NAMES, approvalState, approve, autoApproves, needsAutoApproval, signerNamesApprove } from '../../shared/approval.ts';
import { isExternalIssuerRef } from '../../shared/issuer-lookup.ts';
import type { AnyIssuer, IssuerSpec } from '../../api/types.ts';

export type CRStatus = NonNullable<CertificateRequestObj['status']>;

/**
 * What the request gate and the issuer checks read of an Issuer or ClusterIssuer: the schema's
 * types narrowed to those fields, so a decision table can build an issuer from what matters.
 */
export type IssuerView = Pick<AnyIssuer, 'kind' | 'status'> & {
  metadata: Pick<AnyIssuer['metadata'], 'name' | 'namespace' | 'generation'>;
  spec?: { [K in keyof IssuerSpec]?: unknown } & Pick<IssuerSpec, 'ca' | 'selfSigned'>;
};

/**
 * 'vault' and 'venafi' are cert-manager.io issuer types certsmith accepts in the schema but does
 * not sign for; 'unsupported' is an issuer naming none of the types.
 */
export type IssuerType = 'selfSigned' | 'ca' | 'acme' | 'vault' | 'venafi' | 'unsupported';

export function issuerTypeOf(issuer: IssuerView): IssuerType {
  const s = issuer.spec ?? {};
  if (s.selfSigned) return 'selfSigned';
  if (s.ca) return 'ca';
  if (s.acme) return 'acme';
  if (s.vault) return 'vault';
  if (s.venafi) return 'venafi';
  return 'unsupported';
}

/** The reason on an issuer (and its requests) of a type certsmith does not implement. */
export const UNSUPPORTED_ISSUER_REASON = 'UnsupportedIssuerType';

/**
 * Why an issuer of this type cannot sign, or undefined when certsmith signs for it. Said on the
 * issuer and on every request to it, so a Vault or Venafi issuer is never silently ignored.
 */
export function unsupportedIssuerMessage(type: IssuerType): string | undefined {
  if (type === 'vault') return 'certsmith does not implement the Vault issuer (spec.vault); use a CA, SelfSigned or ACME issuer, or run cert-manager for Vault';
  if (type === 'venafi') return 'certsmith does not implement the Venafi issuer (spec.venafi); use a CA, SelfSigned or ACME issuer, or run cert-manager for Venafi';
  return undefined;
}

/** What the gate says before signing: stop with a status to write, or go on to sign. */
export type GateResult =
  | { kind: 'stop'; status?: CRStatus; events: EventSpec[] }
  | { kind: 'sign'; status: CRStatus; issuer: IssuerView; issuerType: IssuerType; events: EventSpec[] };

export interface GateInput {
  request: CertificateRequestObj;
  issuer?: IssuerView;
  autoApprove: boolean;
  /** the signers the approver approves (default DEFAULT_APPROVE_SIGNER_NAMES; [] approves all) */
  approveSignerNames?: readonly string[];
}

/**
 * Whether gateRequest stops at this request whatever its issuer is: another API group's once
 * approved or denied, denied and marked so, invalid, failed or issued. Such a request's changes
 * wake no signer (issue 17).
 */
export function requestSettled(cr: CertificateRequestObj): boolean {
  const conds = cr.status?.conditions;
  if (isExternalIssuerRef(cr.spec.issuerRef)) return !needsAutoApproval(conds);
  const ready = getCondition(conds, 'Ready');
  if (approvalState(conds) === 'denied') return ready?.reason === 'Denied';
  if (isTrue(conds, 'InvalidRequest')) return true;
  return ready?.reason === 'Failed' || ready?.reason === 'Issued';
}

const approvedEvent: EventSpec = { type: 'Normal', reason: APPROVER_REASON, message: APPROVED_MESSAGE, controller: 'certificaterequests-approver' };

export function gateRequest(input: GateInput, now: Date): GateResult {
  const cr = input.request;
  let status: CRStatus = { ...(cr.status ?? {}) };
  const events: EventSpec[] = [];
  const autoApprove = input.autoApprove && signerNamesApprove(input.approveSignerNames ?? DEFAULT_APPROVE_SIGNER_NAMES, cr.spec.issuerRef, cr.metadata.namespace!);
  if (isExternalIssuerRef(cr.spec.issuerRef)) {
    // approved when its signer is among those the approver approves; its own controller signs it
    if (!autoApprove || !needsAutoApproval(status.conditions)) return { kind: 'stop', events };
    return { kind: 'stop', status: { ...status, conditions: approve(status.conditions, now) }, events: [approvedEvent] };
  }
  const conds = status.conditions;
  const ready = getCondition(conds, 'Ready');

  if (approvalState(conds) === 'denied') {
    if (ready?.reason === 'Denied') return { kind: 'stop', events };
    return {
      kind: 'stop', events,
      status: {
        ...status, failureTime: status.failureTime ?? rfc3339(now),
        conditions: setCondition(conds, { type: 'Ready', status: 'False', reason: 'Denied', message: 'The CertificateRequest was denied by an approval controller' }, now),
      },
    };
  }
  if (isTrue(conds, 'InvalidRequest')) return { kind: 'stop', events };
  if (ready?.reason === 'Failed' || ready?.reason === 'Issued') return { kind: 'stop', events };

  const issuerType = input.issuer ? issuerTypeOf(input.issuer) : 'unsupported';
  if (approvalState(conds) === 'pending') {
    if (!autoApproves({ autoApprove, issuerServedElsewhere: !!input.issuer && issuerType === 'unsupported', conditions: conds })) {
      return { kind: 'stop', events: [{ type: 'Normal', reason: 'WaitingForApproval', message: 'Not signing CertificateRequest until it is Approved' }] };
    }
    status = { ...status, conditions: approve(conds, now) };
    events.push(approvedEvent);
  }

  const kind = cr.spec.issuerRef.kind || 'Issuer';
  const stopPending = (reason: string, message: string): GateResult => {
    const p = pending(status, reason, message, now);
    return { kind: 'stop', status: p.status, events: [...events, ...p.events] };
  };
  // cert-manager's Reporter.Pending appends the lister's NotFound error, which names the issuer
  if (!input.issuer) return stopPending('IssuerNotFound', `Referenced "${kind}" not found: ${kind.toLowerCase()}.cert-manager.io "${cr.spec.issuerRef.name}" not found`);
  if (issuerType === 'unsupported') return { kind: 'stop', status: changed(cr, status), events };
  const unsupported = unsupportedIssuerMessage(issuerType);
  if (unsupported) {
    const f = failed(status, UNSUPPORTED_ISSUER_REASON, unsupported, now);
    return { kind: 'stop', status: f.status, events: [...events, f.event] };
  }
  if (!isTrue(input.issuer.status?.conditions, 'Ready')) {
    return stopPending('IssuerNotReady', 'Referenced issuer does not have a Ready status condition');
  }
  if (status.certificate) return { kind: 'stop', status: changed(cr, status), events };
  return { kind: 'sign', status, issuer: input.issuer, issuerType, events };
}

function changed(cr: CertificateRequestObj, status: CRStatus): CRStatus | undefined {
  return JSON.stringify(cr.status ?? {}) === JSON.stringify(status) ? undefined : status;
}

/** Ready=False/Pending; the event only when the reason or message is new, as cert-manager's reporter does. */
export function pending(status: CRStatus, reason: string, message: string, now: Date): { status: CRStatus; events: EventSpec[] } {
  const was = getCondition(status.conditions, 'Ready');
  return {
    status: { ...status, conditions: setCondition(status.conditions, { type: 'Ready', status: 'False', reason: 'Pending', message }, now) },
    events: was?.reason === 'Pending' && was.message === message ? [] : [{ type: 'Normal', reason, message }],
  };
}

export function failed(status: CRStatus, reason: string, message: string, now: Date): { status: CRStatus; event: EventSpec } {
  return {
    status: { ...status, failureTime: status.failureTime ?? rfc3339(now), conditions: setCondition(status.conditions, { type: 'Ready', status: 'False', reason: 'Failed', message }, now) },
    event: { type: 'Warning', reason, message },
  };
}

export function issued(status: CRStatus, certificatePem: string, caPem: string | undefined, now: Date): { status: CRStatus; event: EventSpec } {
  return {
    status: {
      ...status,
      certificate: Buffer.from(certificatePem).toString('base64'),
      ...(caPem ? { ca: Buffer.from(caPem).toString('base64') } : {}),
      conditions: setCondition(status.conditions, { type: 'Ready', status: 'True', reason: 'Issued', message: 'Certificate fetched from issuer successfully' }, now),
    },
    event: { type: 'Normal', reason: 'CertificateIssued', message: 'Certificate fetched from issuer successfully' },
  };
}
