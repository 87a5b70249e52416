// Issuer readiness and, for ACME issuers, the account the issuer registered.
import type { Condition } from '../../api/meta.ts';
import type { Finding } from '../finding.ts';

export interface IssuerFacts {
  kind: string;
  name: string;
  /** undefined: no such issuer */
  issuer?: { spec?: Record<string, unknown>; status?: { conditions?: Condition[]; acme?: { uri?: string; lastRegisteredEmail?: string } } };
}

function label(f: IssuerFacts): string {
  return `${f.kind} ${f.name}`;
}

export function checkIssuerReady(f: IssuerFacts): Finding {
  if (!f.issuer) {
    return { check: 'issuer', severity: 'error', sentence: `${label(f)} does not exist.`, fix: `Create ${label(f)}, or point the Certificate's spec.issuerRef at an existing issuer.` };
  }
  const ready = f.issuer.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status === 'True') return { check: 'issuer', severity: 'ok', sentence: `${label(f)} is Ready.` };
  if (!ready) {
    return { check: 'issuer', severity: 'error', sentence: `${label(f)} has no Ready condition yet: no controller has looked at it.`, fix: 'Check that the certsmith server or controller is running.' };
  }
  return {
    check: 'issuer', severity: 'error',
    sentence: `${label(f)} is not Ready (${ready.reason ?? 'no reason'}): ${ready.message ?? ''}`.trimEnd(),
    fix: serverDown(f) ? SERVER_DOWN_FIX : `Correct ${label(f)}'s spec as the message says; the issuer is checked again on every change.`,
  };
}

const SERVER_DOWN_FIX = 'The ACME server does not answer: check that it runs and that this host reaches it. The issuer asks again with backoff (5 s doubling to 5 minutes) and is Ready with the same account once it answers; its spec need not change.';

/** An ACME issuer not Ready because its server did not answer (refused, timed out, no such host, 5xx): nothing in its spec to correct. */
function serverDown(f: IssuerFacts): boolean {
  if (!f.issuer?.spec?.acme) return false;
  const ready = f.issuer.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'False' && /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|timed out|socket hang up|fetch failed|\(HTTP 5\d\d\)/.test(ready.message ?? '');
}

/** ACME issuers only: the account URL the CA gave, or why registering failed. */
export function checkAccount(f: IssuerFacts): Finding | undefined {
  if (!f.issuer?.spec?.acme) return undefined;
  const acme = f.issuer.status?.acme;
  const ready = f.issuer.status?.conditions?.find((c) => c.type === 'Ready');
  if (acme?.uri && ready?.status !== 'False') {
    return { check: 'account', severity: 'ok', sentence: `The ACME account of ${label(f)} is registered at ${acme.uri}${acme.lastRegisteredEmail ? ` with contact ${acme.lastRegisteredEmail}` : ''}.` };
  }
  if (acme?.uri && serverDown(f)) {
    return { check: 'account', severity: 'warning', sentence: `The ACME account of ${label(f)} is registered at ${acme.uri}; the ACME server does not answer now.` };
  }
  if (ready?.status === 'False' && /Account|Register/i.test(ready.reason ?? '')) {
    return {
      check: 'account', severity: 'error',
      sentence: `${label(f)} has no usable ACME account${acme?.uri ? ` (last known at ${acme.uri})` : ''}: ${ready.message ?? ready.reason}`,
      fix: 'Check the ACME server URL, its caBundle, the external account binding and that the terms of service are accepted; a deactivated account needs a new privateKeySecretRef.',
    };
  }
  if (!acme?.uri) {
    return { check: 'account', severity: 'warning', sentence: `${label(f)} has not registered an ACME account yet.`, fix: 'Wait for the issuer to become Ready, or read its Ready condition.' };
  }
  return { check: 'account', severity: 'ok', sentence: `The ACME account of ${label(f)} is ${acme.uri}.` };
}
