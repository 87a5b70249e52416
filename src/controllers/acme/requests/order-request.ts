// CertificateRequest → Order for ACME issuers (cert-manager's certificaterequests/acme): one
// Order per request, its state reflected on the request, its certificate copied back.
import net from 'node:net';
import { getCondition, isTrue } from '../../../api/conditions.ts';
import type { Order, OrderSpec } from '../../../api/types.ts';
import type { CertificateRequest as CertificateRequestObj } from '../../../api/types.ts';
import { ownerRefTo } from '../../../shared/ownership.ts';
import { decodeBase64, parseCertMemo, requestCSR } from '../../../shared/parse-memo.ts';
import type { EventSpec } from '../../decision.ts';
import { failed, issued, pending, type CRStatus } from '../../requests/signing.ts';
import { splitPEM } from '../../../pki/pem.ts';
import { computeName } from '../names.ts';
import { ANN_FAILURE_CAUSE, ANN_RETRY, isFailureCause, RETRY_BOUNDS, type FailureCause } from '../recovery.ts';
import { CertificateAnnotation } from '../../../api/annotations.ts';

export const ORDER_FAILURE_STATES = ['invalid', 'expired', 'errored'];

export interface OrderRequestInput {
  request: CertificateRequestObj;
  issuer: { spec?: { acme?: { enableDurationFeature?: boolean; profile?: string } } };
  /** Orders in the request's namespace that belong to the same Certificate, or to this request */
  orders: Order[];
  /**
   * RFC 9773 §5: the ARI CertID of the certificate this request renews (its Certificate's
   * status.acme.ari.certID), set only when the issuer uses ARI; goes into Order.spec.replaces.
   */
  replaces?: string;
}

export interface OrderRequestDecision {
  status?: CRStatus;
  events: EventSpec[];
  /** Orders to delete first: earlier attempts of the same Certificate, or an Order whose certificate is unusable */
  deleteOrders: string[];
  createOrder?: Order;
  /** an Order of this name exists but the request does not control it */
  conflict?: string;
}

/** Whether the ACME request controller has anything to do with this request at all. */
export function isActiveAcmeRequest(cr: CertificateRequestObj): boolean {
  const conds = cr.status?.conditions;
  const reason = getCondition(conds, 'Ready')?.reason;
  return isTrue(conds, 'Approved') && !isTrue(conds, 'Denied') && !isTrue(conds, 'InvalidRequest') &&
    reason !== 'Failed' && reason !== 'Issued' && reason !== 'Denied' && !cr.status?.certificate;
}

function controlledBy(order: Order, cr: CertificateRequestObj): boolean {
  return !!order.metadata.ownerReferences?.some((r) => r.controller && r.uid === cr.metadata.uid);
}

/** The Order this request should have: spec from the CSR, name from the request and that spec. */
export function expectedOrder(cr: CertificateRequestObj, issuer: OrderRequestInput['issuer'], retry = 0, replaces?: string): { order?: Order; error?: { reason: string; message: string } } {
  const csr = requestCSR(cr);
  if (!csr.value) return { error: { reason: 'RequestParsingError', message: `Failed to decode CSR in spec.request: ${csr.error}` } };
  const t = csr.value.template;
  const dnsNames = t.dnsNames ?? [];
  const ips = t.ipAddresses ?? [];
  if (t.commonName && !dnsNames.includes(t.commonName) && !ips.includes(t.commonName)) {
    return {
      error: {
        reason: 'InvalidOrder',
        message: 'The CSR PEM requests a commonName that is not present in the list of dnsNames or ipAddresses. If a commonName is set, ACME requires that the value is also present in the list of SANs.',
      },
    };
  }
  if (!dnsNames.length && !ips.length && !(t.commonName && (net.isIP(t.commonName) || t.commonName.includes('.')))) {
    return { error: { reason: 'InvalidOrder', message: 'The CSR names no DNS name or IP address for the ACME server to validate' } };
  }
  const acme = issuer.spec?.acme ?? {};
  const spec: Omit<OrderSpec, 'request'> = {
    issuerRef: cr.spec.issuerRef,
    ...(t.commonName ? { commonName: t.commonName } : {}),
    ...(dnsNames.length ? { dnsNames } : {}),
    ...(ips.length ? { ipAddresses: ips } : {}),
    ...(acme.enableDurationFeature && cr.spec.duration ? { duration: cr.spec.duration } : {}),
    ...(acme.profile ? { profile: acme.profile } : {}),
    ...(replaces ? { replaces } : {}),
  };
  // cert-manager hashes only the name and the spec, so a retry request (same name, same spec)
  // maps to the failed Order of the attempt before; the request's uid makes each request's Order its own.
  // A retry (an Order that failed for a cause not the user's) gets a name of its own; the first keeps cert-manager's.
  const name = computeName(cr.metadata.name!, retry ? { uid: cr.metadata.uid, spec, retry } : { uid: cr.metadata.uid, spec });
  return {
    order: {
      apiVersion: 'acme.cert-manager.io/v1',
      kind: 'Order',
      metadata: {
        name,
        namespace: cr.metadata.namespace,
        labels: { ...(cr.metadata.labels ?? {}) },
        annotations: { ...(cr.metadata.annotations ?? {}), ...(retry ? { [ANN_RETRY]: String(retry) } : {}) },
        ownerReferences: [ownerRefTo(cr)],
      },
      spec: { request: cr.spec.request, ...spec },
    },
  };
}

/** Which retry of its request an Order is; 0 for the first. */
export function retryOf(order: Order): number {
  const n = Number(order.metadata.annotations?.[ANN_RETRY] ?? 0);
  return Number.isInteger(n) && n > 0 ? n : 0;
}

const CAUSE_TEXT: Record<FailureCause, string> = {
  'solver-unavailable': 'certsmith was restarting while the ACME server validated its HTTP-01 challenge, so the token was not served',
  'account-gone': 'the order belonged to an ACME account the issuer no longer uses (the ACME server forgot it, or the account key Secret changed)',
  'order-gone': 'the ACME server no longer knows the order (HTTP 404 for one of its URLs)',
  'order-invalidated': 'the ACME server made the order invalid although all its authorizations were valid',
};

/**
 * Whether the request's latest Order failed for a cause that is not the user's and may be retried
 * with a new Order instead of failing the request (which would count an issuance attempt and start
 * seed 000's backoff). Bounded per cause and request: RETRY_BOUNDS.
 */
export function retryableFailure(latest: Order, mine: Order[]): { cause: FailureCause; count: number } | undefined {
  if (!ORDER_FAILURE_STATES.includes(latest.status?.state ?? '')) return undefined;
  const cause = latest.metadata.annotations?.[ANN_FAILURE_CAUSE];
  if (!isFailureCause(cause)) return undefined;
  const count = mine.filter((o) => o.metadata.annotations?.[ANN_FAILURE_CAUSE] === cause && ORDER_FAILURE_STATES.includes(o.status?.state ?? '')).length;
  return count <= RETRY_BOUNDS[cause] ? { cause, count } : undefined;
}

function sameCertificate(order: Order, cr: CertificateRequestObj): boolean {
  const crt = cr.metadata.annotations?.[CertificateAnnotation.certificateName];
  return !!crt && order.metadata.annotations?.[CertificateAnnotation.certificateName] === crt;
}

export function decideOrderRequest(input: OrderRequestInput, now: Date): OrderRequestDecision {
  const cr = input.request;
  const status: CRStatus = { ...(cr.status ?? {}) };
  const out: OrderRequestDecision = { events: [], deleteOrders: [] };
  if (!isActiveAcmeRequest(cr)) return out;

  const expected = expectedOrder(cr, input.issuer, 0, input.replaces);
  if (!expected.order) {
    const f = failed(status, expected.error!.reason, expected.error!.message, now);
    return { ...out, status: f.status, events: [f.event] };
  }
  const ns = cr.metadata.namespace;
  const mine = input.orders.filter((o) => controlledBy(o, cr));
  const latest = mine.reduce<Order | undefined>((a, o) => (!a || retryOf(o) > retryOf(a) ? o : a), undefined);
  const retry = latest && retryableFailure(latest, mine);
  if (latest && retry) {
    const next = expectedOrder(cr, input.issuer, retryOf(latest) + 1, input.replaces).order!;
    const why = `Order ${ns}/${latest.metadata.name} failed because ${CAUSE_TEXT[retry.cause]}`;
    const p = pending(status, 'OrderCreated', `${why}; created Order resource ${ns}/${next.metadata.name} (retry ${retry.count} of ${RETRY_BOUNDS[retry.cause]}, not counted as a failed issuance attempt)`, now);
    return {
      ...out, createOrder: next, status: p.status,
      events: [{ type: 'Warning', reason: 'OrderRetried', message: `${why}: retrying with a new Order ${ns}/${next.metadata.name} (${retry.count} of ${RETRY_BOUNDS[retry.cause]}); this does not count as a failed issuance attempt` }, ...p.events],
    };
  }
  const name = latest?.metadata.name ?? expected.order.metadata.name!;
  const order = latest ?? input.orders.find((o) => o.metadata.name === name);

  if (!order) {
    // Earlier attempts' Orders (and their Challenges) were kept for debugging until now.
    out.deleteOrders = input.orders.filter((o) => !controlledBy(o, cr) && sameCertificate(o, cr)).map((o) => o.metadata.name!);
    out.createOrder = expected.order;
    const p = pending(status, 'OrderCreated', `Created Order resource ${ns}/${name}`, now);
    return { ...out, status: p.status, events: [...out.events, ...p.events] };
  }
  if (!controlledBy(order, cr)) return { ...out, conflict: name };

  const state = order.status?.state ?? '';
  if (ORDER_FAILURE_STATES.includes(state)) {
    // a cause that is retried without counting, its retries used up: the reason (the Challenge's)
    // says the Order is retried and it does not count, and now it does
    const cause = order.metadata.annotations?.[ANN_FAILURE_CAUSE];
    const counted = isFailureCause(cause)
      ? `; the request was retried with a new Order ${RETRY_BOUNDS[cause]} times for this cause already (at most ${RETRY_BOUNDS[cause]}), so this failure counts as a failed issuance attempt`
      : '';
    const f = failed(status, 'OrderFailed', `Failed to wait for order resource "${name}" to become ready: order is in "${state}" state: ${order.status?.reason ?? ''}${counted}`, now);
    return { ...out, status: f.status, events: [f.event] };
  }
  // A reason on an Order that has not failed says why it waits (rate limited by the CA: until when).
  const why = order.status?.reason && !ORDER_FAILURE_STATES.includes(state) ? `; ${order.status.reason}` : '';
  const waiting = `Waiting on certificate issuance from order ${ns}/${name}: "${state}"${why}`;
  if (state !== 'valid' || !order.status?.certificate) {
    const p = pending(status, 'OrderPending', waiting, now);
    return { ...out, status: p.status, events: [...out.events, ...p.events] };
  }

  const chainPem = decodeBase64(order.status.certificate);
  const leaf = parseCertMemo(chainPem).value;
  const csr = requestCSR(cr).value;
  if (!leaf || !csr || leaf.publicKeyFingerprint !== csr.publicKeyFingerprint) {
    // cert-manager's answer to an Order whose certificate does not fit: a fresh Order.
    return {
      ...out, deleteOrders: [name],
      events: [{ type: 'Warning', reason: 'OrderBadCertificate', message: `Deleted Order ${ns}/${name}: its certificate does not decode or does not match the request's public key` }],
    };
  }
  // no CA, as upstream's ACME Sign returns none: the chain ends at an intermediate (the root is
  // not sent), which as ca.crt would be taken for a trust anchor
  const ok = issued(status, splitPEM(chainPem).join(''), undefined, now);
  return { ...out, status: ok.status, events: [ok.event] };
}
