// ACME Issuer readiness (cert-manager's pkg/issuer/acme/setup.go): when the account must be
// registered, and the status an outcome turns into.
import { isTrue, setCondition } from '../../../api/conditions.ts';
import type { Condition } from '../../../api/meta.ts';
import type { ACMEIssuer, IssuerStatus } from '../../../api/types.ts';
import { AcmeError, isTransientProblem } from '../../../acme/errors.ts';

export interface AcmeIssuerObj {
  kind: string;
  metadata: { name?: string; namespace?: string; uid?: string; generation?: number };
  spec?: { acme?: ACMEIssuer };
  status?: IssuerStatus;
}

export const REASON = {
  registered: 'ACMEAccountRegistered',
  registerFailed: 'ErrRegisterACMEAccount',
  updateFailed: 'ErrUpdateACMEAccount',
  verifyFailed: 'ErrVerifyACMEAccount',
  invalidUrl: 'InvalidURL',
  invalidProfile: 'InvalidProfile',
} as const;

/** "name (description), ..." of a directory's meta.profiles (draft-aaron-acme-profiles §3). */
export function describeProfiles(profiles: Record<string, string> | undefined): string {
  const names = Object.keys(profiles ?? {});
  return names.length ? names.map((n) => (profiles![n] ? `${n} (${profiles![n]})` : n)).join(', ') : 'none';
}

/**
 * Why spec.acme.profile cannot be used with this directory, or undefined when it can (or none is
 * set). A server that offers no profiles would ignore the field and issue its default: the user
 * asked for something else (a lifetime, usually), so that is refused too.
 */
export function profileProblem(profile: string | undefined, server: string, profiles: Record<string, string> | undefined): string | undefined {
  if (!profile) return undefined;
  if (!profiles || !Object.keys(profiles).length) {
    return `spec.acme.profile "${profile}" cannot be used: the ACME server ${server} offers no profiles (its directory has no meta.profiles); remove the field to get the server's default certificates`;
  }
  if (Object.hasOwn(profiles, profile)) return undefined;
  return `spec.acme.profile "${profile}" is not offered by the ACME server ${server}; it offers: ${describeProfiles(profiles)}`;
}

export const REGISTERED_MESSAGE = 'The ACME account was registered with the ACME server';

function sameHost(a: string | undefined, b: string): boolean {
  try {
    return !!a && new URL(a).host === new URL(b).host;
  } catch {
    return false;
  }
}

/** The account URL to hand the client: status.acme.uri, unless it belongs to another server. */
export function knownAccountUrl(issuer: AcmeIssuerObj): string | undefined {
  const uri = issuer.status?.acme?.uri;
  return sameHost(uri, issuer.spec!.acme!.server) ? uri : undefined;
}

/**
 * Registration is skipped, with no call to the server, when the issuer is already Ready for this
 * very account: same server host, same email, same key.
 */
/** The email an account is registered with, as cert-manager reads it: its first contact without `mailto:`, lower-cased. */
export function registeredEmail(contact: readonly string[] | undefined): string {
  const first = contact?.[0];
  return first === undefined ? '' : first.replace(/^mailto:/i, '').toLowerCase();
}

export function canReuseAccount(issuer: AcmeIssuerObj, keyHash: string): boolean {
  const acme = issuer.spec?.acme;
  const st = issuer.status?.acme;
  if (!acme || !st?.uri) return false;
  return isTrue(issuer.status?.conditions, 'Ready') && sameHost(st.uri, acme.server) &&
    (st.lastRegisteredEmail ?? '') === (acme.email ?? '') && st.lastPrivateKeyHash === keyHash;
}

export function registeredStatus(issuer: AcmeIssuerObj, account: { uri: string; keyHash: string }, now: Date): IssuerStatus {
  return {
    ...(issuer.status ?? {}),
    acme: { uri: account.uri, lastRegisteredEmail: issuer.spec?.acme?.email ?? '', lastPrivateKeyHash: account.keyHash },
    conditions: ready(issuer, 'True', REASON.registered, REGISTERED_MESSAGE, now),
  };
}

export function notReadyStatus(issuer: AcmeIssuerObj, reason: string, message: string, now: Date, opts: { clearUri?: boolean } = {}): IssuerStatus {
  const acme = opts.clearUri ? { ...(issuer.status?.acme ?? {}), uri: '' } : issuer.status?.acme;
  return { ...(issuer.status ?? {}), ...(acme ? { acme } : {}), conditions: ready(issuer, 'False', reason, message, now) };
}

function ready(issuer: AcmeIssuerObj, status: 'True' | 'False', reason: string, message: string, now: Date): Condition[] {
  return setCondition(issuer.status?.conditions, { type: 'Ready', status, reason, message, observedGeneration: issuer.metadata.generation }, now);
}

/**
 * A problem the server answered with (4xx) will not go away by asking again; anything else
 * (no answer, 5xx, rate limits) is retried with backoff.
 */
export function isRetryable(err: unknown): boolean {
  if (err instanceof AcmeError) return err.status === 0 || err.status >= 500 || isTransientProblem(err);
  return true;
}

export function statusChanged(a: IssuerStatus | undefined, b: IssuerStatus): boolean {
  return JSON.stringify(a ?? {}) !== JSON.stringify(b);
}

export const ACCOUNT_GONE_REASONS = ['AccountDoesNotExist', 'AccountDeactivated'];

/**
 * The Issuer status after an Order or Challenge was told that its account is gone: Ready=False
 * with the reason and the account URL cleared, which makes this controller register again (same
 * key; a new one for a deactivated account). Undefined when there is nothing to change: the
 * issuer has already moved to another account (a request that was in flight with the old one
 * must not undo a fresh registration), or already says so.
 */
export function accountGoneStatus(issuer: AcmeIssuerObj, failedAccountUrl: string | undefined, problem: { reason: string; message: string }, now: Date): IssuerStatus | undefined {
  const uri = issuer.status?.acme?.uri;
  if (!uri || (failedAccountUrl && uri !== failedAccountUrl)) return undefined;
  const message = `The ACME server no longer accepts account ${uri}; registering again: ${problem.message}`;
  return notReadyStatus(issuer, problem.reason, message, now, { clearUri: true });
}
