// An ACME server that cannot be reached shows on the Issuer, not only in Events on Orders and
// Challenges (issue 20): the Order and Challenge controllers report it here, the Issuer becomes
// Ready=False (ErrVerifyACMEAccount, as cert-manager words a failed account check, with the
// error), and that makes the Issuer's own controller ask the server again — registering the same
// key, which the CA answers with the existing account — with its backoff, until the server answers
// and the Issuer is Ready again. Shared by those controllers, so it lives beside issuer-account.ts.
import type { KubeObject } from '../../api/meta.ts';
import type { IssuerStatus } from '../../api/types.ts';
import { isTrue } from '../../api/conditions.ts';
import type { ControllerContext } from '../context.ts';
import { readyMessage, updateIssuerStatus } from './issuer-account.ts';
import { notReadyStatus, REASON, type AcmeIssuerObj } from './account/account.ts';

type IssuerObj = AcmeIssuerObj & KubeObject;

export const UNREACHABLE_EVENT_REASON = 'ACMEServerUnreachable';

/**
 * The Issuer's status once its ACME server could not be reached, or undefined when there is
 * nothing to change: the Issuer is not Ready already (a registration in progress or another reason
 * that must not be overwritten), or it is not an ACME issuer.
 */
export function unreachableStatus(issuer: AcmeIssuerObj, error: string, now: Date): IssuerStatus | undefined {
  const server = issuer.spec?.acme?.server;
  if (!server || !isTrue(issuer.status?.conditions, 'Ready')) return undefined;
  return notReadyStatus(issuer, REASON.verifyFailed, `Failed to verify ACME account: the ACME server ${server} cannot be reached: ${error}`, now);
}

/** Called by the Order and Challenge controllers when a call to the issuer's ACME server got no answer at all. */
export async function reportServerUnreachable(ctx: ControllerContext, issuer: IssuerObj, error: Error): Promise<void> {
  const written = await updateIssuerStatus(ctx, issuer, (fresh, now) => unreachableStatus(fresh, error.message, now));
  if (written) ctx.recorder.event(written.issuer, 'Warning', UNREACHABLE_EVENT_REASON, readyMessage(written.status) ?? error.message);
}
