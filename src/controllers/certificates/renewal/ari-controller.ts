// The ARI controller ("certificates-ari"): for each Certificate whose issuer is an ACME issuer
// with renewalInformationSource ARI (the default) and whose directory offers renewalInfo, fetches
// the renewal information of the certificate in its Secret after issuance and again when
// status.acme.ari.nextCheck comes, and stores it there. readiness and trigger read it through
// renewalFor. A failure is recorded and never blocks anything: the ordinary renewal time holds.
import { ariEnabled } from '../../../shared/renewal/renewal-decision.ts';
import { AcmeError } from '../../../acme/client.ts';
import { certIdOf, type CertificateAriStatus } from '../../../acme/ari.ts';
import type { ControllerContext, ControllerSpec } from '../../context.ts';
import { forController } from '../../context.ts';
import { isExternalIssuerRef, lookupIssuer } from '../../../shared/issuer-lookup.ts';
import { clientForIssuer } from '../../acme/issuer-account.ts';
import { acmeAction } from '../../acme/account/registry.ts';
import type { AcmeRuntime } from '../../acme/runtime.ts';
import { certificateCaches, gatherCertificate, watchCertificateGraph } from '../gather.ts';
import { withCertificate, writeCertificateStatus } from '../shell.ts';
import { wakesWhen } from '../wake.ts';
import { wakeByIssuer } from '../../../shared/watch.ts';
import { decodeBase64, parseCertMemo } from '../../../shared/parse-memo.ts';
import { ariStatusAfterAnswer, ariStatusAfterError, decideAriCheck } from './ari-check.ts';
import type { Certificate as CertificateObj } from '../../../api/types.ts';

const MANAGER = 'certificates-ari';

export function ariOf(crt: CertificateObj): CertificateAriStatus | undefined {
  return crt.status?.acme?.ari;
}

export function ariController(shared: ControllerContext, rt: AcmeRuntime): ControllerSpec {
  const ctx = forController(shared, MANAGER);
  const c = certificateCaches(ctx);
  // Answers fetched but not yet stored (a status write that conflicted and is retried with the
  // fresh object): the retry stores the same answer instead of asking the CA twice.
  const unsaved = new Map<string, CertificateAriStatus>();
  /** the Certificate's issuer when one of certsmith's, in the cache */
  const issuerOf = (crt: CertificateObj) => {
    const ref = crt.spec.issuerRef;
    return isExternalIssuerRef(ref) ? undefined : lookupIssuer(ctx, crt.metadata.namespace, ref);
  };
  /** the Certificate's issuer when it is an ACME issuer asking for ARI */
  const ariIssuer = (crt: CertificateObj) => {
    const issuer = issuerOf(crt);
    return issuer && ariEnabled(issuer.spec?.acme) ? issuer : undefined;
  };
  return {
    name: MANAGER,
    watch: (enqueue) => {
      // Certificates of an ACME issuer asking for ARI, and those holding an answer that may have to go;
      // that issuer changing wakes them too
      const applies = (crt: CertificateObj) => !!ariOf(crt) || !!ariIssuer(crt);
      watchCertificateGraph(c, enqueue, wakesWhen(applies));
      wakeByIssuer(ctx.informers, c.certificates, (crt) => enqueue(`${crt.metadata.namespace}/${crt.metadata.name}`));
    },
    reconcile: async (key) => withCertificate(ctx, c, key, async (crt) => {
      if (crt.metadata.deletionTimestamp) return;
      const issuer = ariIssuer(crt);
      const previous = ariOf(crt);
      if (!issuer && !previous) return;
      const input = await gatherCertificate(ctx, c, crt);
      const pem = decodeBase64(input.secret?.data?.['tls.crt']);
      const leaf = pem ? parseCertMemo(pem).value : undefined;
      const now = ctx.clock.now();
      const currentID = leaf ? certIdOf(leaf) : undefined;
      const check = decideAriCheck(previous, currentID, now);
      if (!issuer || check.kind === 'none') {
        // an answer about another certificate, or from an issuer that no longer asks (ARI turned
        // off, or another issuer now): the ordinary renewal time applies again. An issuer not in
        // the cache (yet) is no reason to drop it.
        const notAsked = !issuer && !!issuerOf(crt);
        if (previous && (previous.certID !== currentID || notAsked) && input.secret) {
          const { ari: _stale, ...rest } = crt.status?.acme ?? {};
          await writeCertificateStatus(ctx, crt, { ...(crt.status ?? {}), acme: Object.keys(rest).length ? rest : undefined }, MANAGER);
        }
        return;
      }
      if (check.kind === 'wait') return { requeueAfterMs: check.untilMs };
      const memoKey = `${crt.metadata.uid}/${check.certID}`;
      const memo = unsaved.get(memoKey);
      let next: CertificateAriStatus;
      if (memo && Date.parse(memo.nextCheck ?? '') > now.getTime()) next = memo;
      else try {
        const client = await clientForIssuer(ctx, rt, issuer);
        const info = await acmeAction('get_renewal_info', () => client.getRenewalInfo(check.certID));
        if (!info) return; // the directory offers no renewalInfo: nothing to store, nothing to ask again
        next = ariStatusAfterAnswer(check.certID, info, now);
      } catch (e) {
        const retryAfterMs = e instanceof AcmeError ? e.retryAfterMs : undefined;
        next = ariStatusAfterError(previous, check.certID, (e as Error).message, retryAfterMs, now);
        ctx.logger.warn?.({ certificate: key, err: (e as Error).message }, 'fetching ACME renewal information failed; the ordinary renewal time applies');
      }
      const acmeStatus = { ...(crt.status?.acme ?? {}), ari: next };
      unsaved.set(memoKey, next);
      await writeCertificateStatus(ctx, crt, { ...(crt.status ?? {}), acme: acmeStatus }, MANAGER);
      unsaved.delete(memoKey);
      if (next.suggestedWindow && JSON.stringify(next.suggestedWindow) !== JSON.stringify(previous?.certID === check.certID ? previous.suggestedWindow : undefined)) {
        ctx.recorder.event(crt, 'Normal', 'RenewalInformation', `The ACME server suggests renewing between ${next.suggestedWindow.start} and ${next.suggestedWindow.end}${next.explanationURL ? ` (${next.explanationURL})` : ''}`);
      }
      return { requeueAfterMs: Date.parse(next.nextCheck!) - now.getTime() };
    }),
  };
}
