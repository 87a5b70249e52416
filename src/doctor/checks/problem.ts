// The last ACME problem document (RFC 8555 §6.7) an Order or Challenge recorded, with its
// subproblems, read back from the reason the controllers wrote (AcmeError's message:
// "<context>: <type>: <detail> (HTTP n) [<identifier>: <type>: <detail>; ...]").
import type { Finding } from '../finding.ts';
import { byCodeUnits } from '../../api/ordering.ts';
import { ACMEOrderAnnotation } from '../../api/annotations.ts';

export interface FailedACMEObject {
  kind: 'Order' | 'Challenge';
  name: string;
  state?: string;
  reason?: string;
  /** failureTime (Orders), else the object's creation time; for picking the latest */
  at?: string;
}

interface OrderLike { metadata: { name?: string; creationTimestamp?: string; annotations?: Record<string, string>; ownerReferences?: { uid: string; controller?: boolean }[] } }

/**
 * The newest Order of each request: an older one was replaced inside its request (the account
 * changed, the order was lost at the CA), a retry that does not count as a failed issuance, so its
 * failure is no longer the Certificate's problem.
 */
export function currentOrders<T extends OrderLike>(orders: T[]): T[] {
  const newest = new Map<string, T>();
  // the retry count the controllers stamp orders first (creation times are whole seconds)
  const key = (o: T) => `${String(Number(o.metadata.annotations?.[ACMEOrderAnnotation.retry] ?? 0)).padStart(4, '0')}\u0000${o.metadata.creationTimestamp ?? ''}\u0000${o.metadata.name ?? ''}`;
  for (const o of orders) {
    const request = o.metadata.ownerReferences?.find((r) => r.controller)?.uid ?? o.metadata.name ?? '';
    const held = newest.get(request);
    if (!held || byCodeUnits(key(held), key(o)) < 0) newest.set(request, o);
  }
  return [...newest.values()];
}

export interface ParsedProblem {
  type: string;
  detail: string;
  status?: number;
  subproblems: { identifier?: string; type: string; detail: string }[];
}

const URN = 'urn:ietf:params:acme:error:';

export function parseProblem(reason: string): ParsedProblem | undefined {
  const at = reason.indexOf(URN);
  if (at < 0) return undefined;
  let rest = reason.slice(at + URN.length);
  let subs = '';
  const open = rest.indexOf(' [');
  if (open >= 0 && rest.endsWith(']')) {
    subs = rest.slice(open + 2, -1);
    rest = rest.slice(0, open);
  }
  const colon = rest.indexOf(':');
  const type = colon < 0 ? rest.trim() : rest.slice(0, colon).trim();
  let detail = colon < 0 ? '' : rest.slice(colon + 1).trim();
  let status: number | undefined;
  const http = / \(HTTP (\d{3})\)$/.exec(detail);
  if (http) {
    status = Number(http[1]);
    detail = detail.slice(0, http.index);
  }
  const subproblems = subs ? subs.split('; ').map((s) => {
    const i = s.indexOf(URN);
    const identifier = i > 0 ? s.slice(0, i).replace(/:\s*$/, '') : undefined;
    const body = i >= 0 ? s.slice(i + URN.length) : s;
    const c = body.indexOf(':');
    return { ...(identifier ? { identifier } : {}), type: (c < 0 ? body : body.slice(0, c)).trim(), detail: c < 0 ? '' : body.slice(c + 1).trim() };
  }) : [];
  return { type, detail, ...(status ? { status } : {}), subproblems };
}

const FIXES: Record<string, string> = {
  caa: 'Allow the CA in the CAA records of the name (see the CAA check).',
  dns: 'The CA could not resolve the name or its TXT record: check the DNS checks above.',
  connection: 'The CA could not connect to the name for HTTP-01: check the HTTP-01 check above.',
  incorrectResponse: 'The CA fetched the challenge and got something else: check what answers /.well-known/acme-challenge/ for the name.',
  unauthorized: 'The CA did not find the expected challenge response: check the HTTP-01 or DNS-01 checks above.',
  rejectedIdentifier: 'The CA will not issue for this name at all (its policy): remove the name or use another CA.',
  rateLimited: 'Wait until the rate limit passes (see the rate-limit check); do not delete and recreate Certificates, each new order counts.',
  badCSR: 'The CA refused the CSR: check the key algorithm and size and the names in spec.',
  accountDoesNotExist: 'The CA no longer knows the account: certsmith registers again; check the issuer\'s account check.',
  externalAccountRequired: 'The CA requires external account binding: set spec.acme.externalAccountBinding on the issuer.',
  tls: 'The CA could not complete TLS with the name: check the server that answers on port 443.',
  serverInternal: 'The CA failed internally: certsmith retries with backoff; nothing to change here.',
};

export function checkLastProblem(objects: FailedACMEObject[], certificateReady: boolean): Finding | undefined {
  const failed = objects
    .filter((o) => o.reason && (o.state === 'invalid' || o.state === 'errored' || o.state === 'expired' || o.reason.includes(URN)))
    .sort((a, b) => byCodeUnits(a.at ?? '', b.at ?? ''));
  const last = failed.at(-1);
  if (!last?.reason) return undefined;
  const p = parseProblem(last.reason);
  const severity = certificateReady ? 'warning' : 'error';
  if (!p) {
    return { check: 'acme-problem', severity, sentence: `${last.kind} ${last.name} ${last.state ? `is ${last.state}` : 'failed'}: ${last.reason}` };
  }
  const subs = p.subproblems.map((s) => ` ${s.identifier ? `${s.identifier}: ` : ''}${s.type}: ${s.detail}.`).join('');
  return {
    check: 'acme-problem', severity,
    sentence: `The last ACME problem, on ${last.kind} ${last.name}${p.status ? ` (HTTP ${p.status})` : ''}, was ${p.type}: ${p.detail}${p.subproblems.length ? `. Subproblems:${subs}` : '.'}`,
    fix: FIXES[p.subproblems[0]?.type ?? p.type] ?? FIXES[p.type] ?? 'Read the detail above; certsmith retries with backoff once the cause is gone.',
  };
}
