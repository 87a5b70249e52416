// `certsmith doctor`: for one Certificate, gathers the facts (API objects, DNS, HTTP, the ACME
// directory) and runs each check over them. The checks themselves are pure (checks/*.ts).
import dns from 'node:dns';
import { Certificate, CertificateRequest, Challenge, ClusterIssuer, EventType, Issuer, Order } from '../api/resources.ts';
import type { ACMESolver, Challenge as ChallengeObj, Order as OrderObj } from '../api/types.ts';
import type { KubeObject } from '../api/meta.ts';
import type { Store } from '../store/store.ts';
import type { Certificate as CertificateObj, CertificateRequest as CertificateRequestObj } from '../api/types.ts';
import { selectSolver } from '../shared/solver-selection.ts';
import type { BackoffConfig } from '../shared/backoff.ts';
import { retryScheduleFor, withServerNextAttempt } from '../shared/certificate-schedule.ts';
import type { Finding } from './finding.ts';
import { checkResolution } from './checks/resolution.ts';
import { checkHTTP01 } from './checks/http01.ts';
import { checkCAA } from './checks/caa.ts';
import { txtFindings } from './checks/txt.ts';
import { checkAccount, checkIssuerReady, type IssuerFacts } from './checks/issuer.ts';
import { checkLastProblem, currentOrders, type FailedACMEObject } from './checks/problem.ts';
import { checkRateLimits } from './checks/rate-limit.ts';
import { checkBackoff } from './checks/backoff.ts';
import { checkApproval } from './checks/approval.ts';
import { revisionOf } from '../shared/revisions.ts';
import { checkDelivery, DELIVERY_CHECKS } from './checks/delivery.ts';
import { lastHookOutcome, type HookEvent } from '../shared/deploy-hook-events.ts';
import { fetchCAAIdentities, fetchChallenge, lookupAddresses, lookupCAA, txtVisibility } from './gather.ts';
import crypto from 'node:crypto';

export interface DoctorOptions {
  /** resolvers for addresses and CAA, HOST:PORT (the server's --acme-http01-solver-nameservers); default the system's */
  nameservers?: string[];
  /** the server's --dns01-recursive-nameservers[-only] */
  dns01Nameservers?: string[];
  dns01NameserversOnly?: boolean;
  /** port the zone's authoritative nameservers answer on (53; another only on test rigs and split setups) */
  authoritativePort?: number;
  /** port the CA connects to for HTTP-01 (80; Pebble's httpPort in tests) */
  http01Port?: number;
  /** the CA's CAA identifiers when its directory publishes none */
  caaIdentities?: string[];
  backoff: BackoffConfig;
  now: () => Date;
  timeoutMs?: number;
}

export interface Diagnosis {
  certificate: string;
  headline: string;
  findings: Finding[];
}

const owned = (o: KubeObject, uids: Set<string | undefined>) => !!o.metadata.ownerReferences?.some((r) => uids.has(r.uid));

/** What a diagnosis reads of the API. */
type Reader = Pick<Store, 'get' | 'list'>;

/**
 * The API as one run of doctor reads it: each object and each namespace's list fetched once, not
 * once per Certificate (1,000 Certificates in a namespace took 3 minutes, listing its requests,
 * orders and challenges 1,000 times). A run is a moment's snapshot anyway.
 */
function readingOnce(store: Reader): Reader {
  const memo = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, read: () => Promise<T>): Promise<T> => {
    if (!memo.has(key)) memo.set(key, read());
    return memo.get(key) as Promise<T>;
  };
  return {
    get: (type, namespace, name) => once(`get ${type.group}/${type.plural} ${namespace ?? ''}/${name}`, () => store.get(type, namespace, name)),
    list: (type, o) => once(`list ${type.group}/${type.plural} ${o?.namespace ?? ''}`, () => store.list(type, o?.namespace ? { namespace: o.namespace } : {})),
  } as Reader;
}

/** Diagnoses each Certificate in turn, reading the API once for all of them; `each` gets every diagnosis as it is made. */
export async function diagnoseAll(store: Reader, certificates: CertificateObj[], opts: DoctorOptions, each: (d: Diagnosis) => void = () => {}): Promise<Diagnosis[]> {
  const reader = readingOnce(store);
  const out: Diagnosis[] = [];
  for (const crt of certificates) {
    const d = await diagnose(reader, crt, opts);
    each(d);
    out.push(d);
  }
  return out;
}

async function issuerOf(store: Reader, crt: CertificateObj): Promise<IssuerFacts> {
  const kind = crt.spec.issuerRef.kind || 'Issuer';
  const name = crt.spec.issuerRef.name;
  const ns = crt.metadata.namespace ?? 'default';
  const issuer = kind === 'ClusterIssuer' ? await store.get(ClusterIssuer, undefined, name) : kind === 'Issuer' ? await store.get(Issuer, ns, name) : undefined;
  return { kind, name, ...(issuer ? { issuer: issuer as IssuerFacts['issuer'] } : {}) };
}

export async function diagnose(store: Reader, crt: CertificateObj, opts: DoctorOptions): Promise<Diagnosis> {
  const ns = crt.metadata.namespace ?? 'default';
  const now = opts.now();
  const timeoutMs = opts.timeoutMs ?? 5000;
  const findings: Finding[] = [];
  const ready = crt.status?.conditions?.find((c) => c.type === 'Ready');
  // the namespace's Events (the server's Backoff Event, the deploy hook's outcome): read once per run by readingOnce
  const events = async () => (await store.list<HookEvent>(EventType, { namespace: ns })).items;
  const headline = `Certificate ${ns}/${crt.metadata.name}: ${ready?.status === 'True' ? 'Ready' : `not Ready${ready ? ` (${ready.reason ?? ''}: ${ready.message ?? ''})` : ''}`}`;

  const issuer = await issuerOf(store, crt);
  findings.push(checkIssuerReady(issuer));
  const acme = issuer.issuer?.spec?.acme as { server?: string; caBundle?: string; skipTLSVerify?: boolean; solvers?: ACMESolver[] } | undefined;
  const account = checkAccount(issuer);
  if (account) findings.push(account);

  // the chain request → order → challenge, every revision: the last problem may be an older one's
  const requests = (await store.list<CertificateRequestObj>(CertificateRequest, { namespace: ns })).items.filter((r) => owned(r, new Set([crt.metadata.uid])));
  const orders = (await store.list<OrderObj>(Order, { namespace: ns })).items.filter((o) => owned(o, new Set(requests.map((r) => r.metadata.uid))));
  const challenges = (await store.list<ChallengeObj>(Challenge, { namespace: ns })).items.filter((c) => owned(c, new Set(orders.map((o) => o.metadata.uid))));
  // the request of the revision being issued: denied, or waiting for approval, nothing signs it
  if (ready?.status !== 'True') {
    const current = requests.reduce<CertificateRequestObj | undefined>((best, r) => (!best || (revisionOf(r) ?? 0) > (revisionOf(best) ?? 0) ? r : best), undefined);
    findings.push(...checkApproval(`${ns}/${crt.metadata.name}`, current && { name: current.metadata.name!, conditions: current.status?.conditions ?? [] }));
  }

  if (acme) {
    const nameservers = opts.nameservers?.length ? opts.nameservers : opts.dns01Nameservers?.length ? opts.dns01Nameservers : dns.getServers();
    let identities = opts.caaIdentities;
    if (!identities?.length && acme.server) {
      try {
        identities = await fetchCAAIdentities(acme.server, acme.caBundle ? Buffer.from(acme.caBundle, 'base64').toString('utf8') : undefined, !!acme.skipTLSVerify, timeoutMs);
      } catch (e) {
        findings.push({ check: 'caa', severity: 'warning', sentence: `The ACME directory could not be read to learn the CA's CAA identifiers: ${(e as Error).message}.`, fix: 'Check the issuer\'s spec.acme.server and caBundle; see the issuer check.' });
      }
    }
    // a challenge that is over (valid, or failed and cleaned up) has no token or TXT record to look for
    const pending = challenges.filter((c) => !['valid', 'invalid', 'expired', 'errored'].includes(c.status?.state ?? ''));
    for (const name of crt.spec.dnsNames ?? []) {
      const wildcard = name.startsWith('*.');
      const base = name.replace(/^\*\./, '');
      const picked = selectSolver(acme.solvers ?? [], {
        identifier: base, wildcard, challenges: [{ type: 'http-01', url: '', token: '' }, { type: 'dns-01', url: '', token: '' }],
      }, crt.metadata.labels ?? {});
      const type = picked?.challenge.type;
      if (!type) {
        findings.push({ check: 'solver', severity: 'error', sentence: `No solver of ${issuer.kind} ${issuer.name} applies to ${name}${wildcard ? ' (a wildcard needs a DNS-01 solver)' : ''}.`, fix: `Add a solver for ${name} to the issuer's spec.acme.solvers, or widen a selector.` });
        continue;
      }
      const lookup = await lookupAddresses(base, nameservers, timeoutMs);
      findings.push(checkResolution(lookup, type === 'http-01'));
      findings.push(checkCAA(name, await lookupCAA(name, nameservers, timeoutMs), identities));
      if (type === 'http-01' && lookup.addresses.length) {
        const port = opts.http01Port ?? 80;
        const c = pending.find((x) => x.spec.type === 'HTTP-01' && x.spec.dnsName === base);
        // without a pending challenge, a made-up token shows what answers without matching any real one
        const token = c?.spec.token ?? `certsmith-doctor-${crypto.randomBytes(8).toString('hex')}`;
        const url = `http://${base}${port === 80 ? '' : `:${port}`}/.well-known/acme-challenge/${token}`;
        const outcome = await fetchChallenge(base, lookup.addresses[0], port, token, timeoutMs);
        findings.push(checkHTTP01({ name: base, url, outcome, ...(c ? { expected: c.spec.key } : {}) }));
      }
      if (type === 'dns-01') {
        const c = pending.find((x) => x.spec.type === 'DNS-01' && x.spec.dnsName === base && !!x.spec.wildcard === wildcard);
        if (!c) {
          findings.push({ check: 'dns-01', severity: 'info', sentence: `No DNS-01 challenge is pending for ${name}, so there is no TXT record to look for.` });
          continue;
        }
        const fqdn = `_acme-challenge.${base}`;
        const recursive = opts.dns01Nameservers?.length ? opts.dns01Nameservers : dns.getServers();
        if (!opts.dns01NameserversOnly) findings.push(...txtFindings(await txtVisibility(fqdn, c.spec.key, 'authoritative', recursive, opts.authoritativePort ?? 53)));
        findings.push(...txtFindings(await txtVisibility(fqdn, c.spec.key, 'recursive', recursive, opts.authoritativePort ?? 53)));
      }
    }
    findings.push(...checkRateLimits(orders.filter((o) => !['valid', 'invalid', 'errored', 'expired'].includes(o.status?.state ?? '')).map((o) => ({
      order: o.metadata.name!, ...(o.metadata.annotations ? { annotations: o.metadata.annotations } : {}), ...(o.status?.reason ? { reason: o.status.reason } : {}),
    })), now));
    // an Order its request replaced (a retry that does not count) is not the Certificate's problem, nor are its Challenges
    const current = currentOrders(orders);
    const currentUids = new Set(current.map((o) => o.metadata.uid));
    const failed: FailedACMEObject[] = [
      ...current.map((o): FailedACMEObject => ({ kind: 'Order', name: o.metadata.name!, state: o.status?.state, reason: o.status?.reason, at: o.status?.failureTime ?? o.metadata.creationTimestamp })),
      ...challenges.filter((c) => owned(c, currentUids)).map((c): FailedACMEObject => ({ kind: 'Challenge', name: c.metadata.name!, state: c.status?.state, reason: c.status?.reason, at: c.metadata.creationTimestamp })),
    ].filter((o) => !/^Rate limited by the ACME server/.test(o.reason ?? ''));
    const problem = checkLastProblem(failed, ready?.status === 'True');
    if (problem) findings.push(problem);
  }

  if (crt.status?.lastFailureTime) {
    // the schedule the trigger controller keeps (shared with `certsmith status` and the dashboard),
    // with the server's backoff settings; all Certificates, for its spread rule
    const all = (await store.list<CertificateObj>(Certificate)).items;
    const computed = retryScheduleFor(crt, all, opts.backoff, crt.status.notAfter ? new Date(crt.status.notAfter) : undefined);
    const retry = computed && withServerNextAttempt(computed, crt, await events());
    const b = retry && checkBackoff({
      certificate: crt.metadata.name!, ready: ready?.status === 'True', failedAttempts: retry.attempts, lastFailureTime: crt.status.lastFailureTime, nextAttempt: retry.nextAttempt,
    }, now);
    if (b) findings.push(b);
  }
  // issued but not delivered: the files a web server reads, the hook that reloads it
  const hook = lastHookOutcome(await events(), crt);
  const filesMirrored = crt.status?.conditions?.find((c) => c.type === 'FilesMirrored');
  findings.push(...checkDelivery({ ...(filesMirrored ? { filesMirrored } : {}), ...(hook ? { hook } : {}) }));
  return { certificate: `${ns}/${crt.metadata.name}`, headline, findings };
}

/** The Certificates to look at: one by name, or every one (of a namespace). */
export async function certificatesFor(store: Store, namespace: string | undefined, name: string | undefined): Promise<CertificateObj[]> {
  if (name) {
    const crt = await store.get<CertificateObj>(Certificate, namespace ?? 'default', name);
    return crt ? [crt] : [];
  }
  return (await store.list<CertificateObj>(Certificate, namespace ? { namespace } : {})).items;
}

const MARK: Record<Finding['severity'], string> = { ok: 'ok', info: 'info', warning: 'warning', error: 'ERROR' };

export function formatDiagnosis(d: Diagnosis): string {
  const lines = [d.headline];
  for (const f of d.findings) {
    lines.push(`  [${MARK[f.severity]}] ${f.check}: ${f.sentence}`);
    if (f.fix && f.severity !== 'ok') lines.push(`      fix: ${f.fix}`);
  }
  const errors = d.findings.filter((f) => f.severity === 'error');
  const blocking = errors.filter((f) => !DELIVERY_CHECKS.has(f.check)).length;
  const undelivered = errors.length - blocking;
  lines.push(blocking ? `  ${blocking} problem${blocking === 1 ? '' : 's'} block${blocking === 1 ? 's' : ''} issuance.` : '  Nothing blocks issuance.');
  if (undelivered) lines.push(`  ${undelivered} problem${undelivered === 1 ? ' keeps' : 's keep'} the issued certificate from use (files, deploy hook).`);
  return lines.join('\n') + '\n';
}
