// Revoke on delete (issue 16, opt-in): a Certificate annotated
// `acme.certsmith.io/revoke-on-delete: "true"` whose issuer is an ACME issuer gets a finalizer;
// when it is deleted, the certificate in its Secret is revoked at the CA (RFC 8555 §7.6, reason
// cessationOfOperation, with the issuer's account key) before the finalizer is removed and the
// Certificate goes. A CA that refuses or cannot be reached is retried with backoff; the Certificate
// stays Terminating meanwhile (remove the finalizer by hand to give up). Nothing to revoke (no
// Secret, not an ACME issuer, already revoked) lets it go at once, with an Event saying why.
//
// Revoke on key rotation (issue 16, opt-in, superseded.ts): with
// `acme.certsmith.io/revoke-on-key-rotation: "true"`, a Secret update that replaces the
// certificate and its key queues the old certificate on the Certificate (an annotation, so a
// restart or a CA that is down loses none) and it is revoked with reason superseded, retried with
// backoff while the CA cannot be reached; a CA that refuses it (4xx) ends the attempt with an Event.
import { Certificate as CertificateType, SecretType } from '../../../api/resources.ts';
import type { Certificate } from '../../../api/types.ts';
import type { KubeObject, Secret } from '../../../api/meta.ts';
import { REVOKE_ON_DELETE_ANNOTATION, REVOKE_ON_KEY_ROTATION_ANNOTATION, SUPERSEDED_CERTIFICATES_ANNOTATION } from '../../../api/annotations.ts';
import { isRefusal } from '../../../acme/errors.ts';
import { AcmeError } from '../../../acme/client.ts';
import { isConflict, isNotFound } from '../../../store/store.ts';
import { splitKey } from '../../../runtime/controller.ts';
import { certificatesOfSecret, indexCertificatesBySecret } from '../../../shared/certificate-index.ts';
import { lookupIssuer } from '../../../shared/issuer-lookup.ts';
import { decodeBase64 } from '../../../shared/parse-memo.ts';
import { certificateBlocks } from '../../../pki/pem.ts';
import type { ControllerContext, ControllerSpec } from '../../context.ts';
import { forController, componentNameOf } from '../../context.ts';
import { clientForIssuer } from '../issuer-account.ts';
import { acmeAction } from '../account/registry.ts';
import type { AcmeRuntime } from '../runtime.ts';
import { REVOKE_FINALIZER, revocationWakesOnAdd, revocationWakesOnUpdate } from './wake.ts';
import { describeCertificate, parsePending, SUPERSEDED, supersededCertificate, withPending } from './superseded.ts';
import { secretCache } from '../../../shared/secret-cache.ts';

const MANAGER = 'certificates-acme-revocation';
/** RFC 5280 CRLReason cessationOfOperation: the certificate is no longer needed */
const CESSATION_OF_OPERATION = 5;

type CertificateObj = Certificate & KubeObject;

export function wantsRevocation(crt: CertificateObj): boolean {
  return crt.metadata.annotations?.[REVOKE_ON_DELETE_ANNOTATION] === 'true';
}

export function wantsRotationRevocation(crt: CertificateObj): boolean {
  return crt.metadata.annotations?.[REVOKE_ON_KEY_ROTATION_ANNOTATION] === 'true';
}

export function revocationController(shared: ControllerContext, rt: AcmeRuntime): ControllerSpec {
  const ctx = forController(shared, MANAGER);
  const certificates = ctx.informers.informerFor<CertificateObj>(CertificateType);
  const secrets = secretCache(ctx.informers);
  indexCertificatesBySecret(certificates);
  /** replaced certificates seen in Secret updates, not yet recorded on their Certificate */
  const observed = new Map<string, string[]>();

  async function recordPending(crt: CertificateObj, pending: string[]): Promise<void> {
    await ctx.store.patch(CertificateType, crt.metadata.namespace, crt.metadata.name!, 'merge',
      { metadata: { annotations: { [SUPERSEDED_CERTIFICATES_ANNOTATION]: pending.length ? pending.join(',') : null } } }, { fieldManager: componentNameOf(MANAGER) })
      .catch((e) => { if (!isNotFound(e)) throw e; });
  }

  /** Revoke the certificates the Certificate's key rotations replaced; throws (for backoff) while some could not be. */
  async function revokeSuperseded(key: string, crt: CertificateObj): Promise<void> {
    const recorded = parsePending(crt.metadata.annotations?.[SUPERSEDED_CERTIFICATES_ANNOTATION]);
    if (!wantsRotationRevocation(crt)) {
      observed.delete(key);
      if (recorded.length) await recordPending(crt, []);
      return;
    }
    const { pending, dropped } = withPending(recorded, observed.get(key) ?? []);
    for (const d of dropped) ctx.recorder.event(crt, 'Warning', 'RevocationFailed', `Not revoking the replaced certificate ${describeCertificate(d)}: too many replaced certificates wait for revocation`);
    if (pending.join(',') !== recorded.join(',')) await recordPending(crt, pending);
    observed.delete(key);
    if (!pending.length) return;
    const issuer = lookupIssuer(ctx, crt.metadata.namespace, crt.spec.issuerRef);
    if (!issuer?.spec?.acme) {
      ctx.recorder.event(crt, 'Normal', 'RevocationSkipped', 'Replaced certificates not revoked: the issuer is gone or not an ACME issuer');
      return recordPending(crt, []);
    }
    const client = await clientForIssuer(ctx, rt, issuer);
    const left: string[] = [];
    let retry: Error | undefined;
    for (const der of pending) {
      const what = describeCertificate(der);
      try {
        await acmeAction('revoke_certificate', () => client.revokeCertificate(Buffer.from(der, 'base64'), SUPERSEDED));
        ctx.recorder.event(crt, 'Normal', 'Revoked', `The certificate of the replaced private key (${what}) was revoked at the ACME server (superseded)`);
      } catch (e) {
        if (e instanceof AcmeError && e.type === 'urn:ietf:params:acme:error:alreadyRevoked') continue;
        if (isRefusal(e)) {
          // refused for good (another CA's certificate, an account that may not revoke it): asking again will not help
          ctx.recorder.event(crt, 'Warning', 'RevocationFailed', `The ACME server refused to revoke the replaced certificate ${what}: ${e.message}`);
          continue;
        }
        ctx.recorder.event(crt, 'Warning', 'RevocationFailed', `Revoking the replaced certificate ${what} failed (retrying): ${(e as Error).message}`);
        left.push(der);
        retry = e as Error;
      }
    }
    await recordPending(crt, left);
    if (retry) throw retry;
  }

  async function setFinalizer(crt: CertificateObj, present: boolean): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const fresh = attempt === 0 ? crt : await ctx.store.get<CertificateObj>(CertificateType, crt.metadata.namespace, crt.metadata.name!);
      if (!fresh) return;
      const others = (fresh.metadata.finalizers ?? []).filter((f) => f !== REVOKE_FINALIZER);
      const finalizers = present ? [...others, REVOKE_FINALIZER] : others;
      if (finalizers.length === (fresh.metadata.finalizers ?? []).length && present === (fresh.metadata.finalizers ?? []).includes(REVOKE_FINALIZER)) return;
      try {
        await ctx.store.update(CertificateType, { ...fresh, metadata: { ...fresh.metadata, finalizers } }, { fieldManager: componentNameOf(MANAGER) });
        return;
      } catch (e) {
        if (isNotFound(e)) return;
        if (!isConflict(e) || attempt >= 4) throw e;
      }
    }
  }

  return {
    name: MANAGER,
    retry: { baseDelayMs: 5_000, maxDelayMs: 600_000 },
    watch(enqueue) {
      const key = (o: KubeObject) => enqueue(`${o.metadata.namespace}/${o.metadata.name}`);
      certificates.onAdd((c) => { if (revocationWakesOnAdd(c)) key(c); });
      certificates.onUpdate((o, n) => { if (revocationWakesOnUpdate(o, n)) key(n); });
      // a Secret whose certificate now certifies another key: its Certificate's old certificate is superseded
      secrets.onUpdate((before, after) => {
        const ns = after.metadata.namespace;
        const crt = certificatesOfSecret(certificates, ns, after.metadata.name!).find(wantsRotationRevocation);
        if (!crt) return;
        const der = supersededCertificate(before, after);
        if (!der) return;
        const k = `${ns}/${crt.metadata.name}`;
        observed.set(k, [...(observed.get(k) ?? []), der]);
        key(crt);
      });
    },
    async reconcile(key) {
      const { namespace, name } = splitKey(key);
      const crt = certificates.get(namespace, name);
      if (!crt) return;
      const has = (crt.metadata.finalizers ?? []).includes(REVOKE_FINALIZER);
      if (!crt.metadata.deletionTimestamp) {
        // the finalizer follows the annotation while the Certificate lives
        if (wantsRevocation(crt) !== has) await setFinalizer(crt, wantsRevocation(crt));
        await revokeSuperseded(key, crt);
        return;
      }
      if (!has) return;
      const letGo = async (why: string) => {
        ctx.recorder.event(crt, 'Normal', 'RevocationSkipped', why);
        await setFinalizer(crt, false);
      };
      const issuer = lookupIssuer(ctx, crt.metadata.namespace, crt.spec.issuerRef);
      if (!issuer?.spec?.acme) return letGo('Not revoked on delete: the issuer is gone or not an ACME issuer');
      const secret = await ctx.store.get<Secret>(SecretType, crt.metadata.namespace, crt.spec.secretName);
      const leaf = certificateBlocks(decodeBase64(secret?.data?.['tls.crt']))[0];
      if (!leaf) return letGo(`Not revoked on delete: Secret ${crt.spec.secretName} holds no certificate`);
      const client = await clientForIssuer(ctx, rt, issuer);
      let already = false;
      try {
        await acmeAction('revoke_certificate', () => client.revokeCertificate(leaf.der, CESSATION_OF_OPERATION));
      } catch (e) {
        if (!(e instanceof AcmeError && e.type === 'urn:ietf:params:acme:error:alreadyRevoked')) {
          ctx.recorder.event(crt, 'Warning', 'RevocationFailed', `Revoking the certificate before deletion failed (retrying): ${(e as Error).message}`);
          throw e;
        }
        already = true;
      }
      ctx.recorder.event(crt, 'Normal', 'Revoked', already
        ? 'The certificate had already been revoked at the ACME server (alreadyRevoked); nothing to revoke before deletion'
        : 'The certificate was revoked at the ACME server before deletion (cessationOfOperation)');
      await setFinalizer(crt, false);
    },
  };
}
