// Revoke on delete (issue 16, opt-in): a Certificate annotated
// `acme.certsmith.io/revoke-on-delete: "true"` whose issuer is an ACME issuer gets a finalizer;
// when it is deleted, the certificate in its Secret is revoked at the CA (RFC 8555 §7.6, reason
// cessationOfOperation, with the issuer's account key) before the finalizer is removed and the
// Certificate goes. A CA that refuses or cannot be reached is retried with backoff; the Certificate
// stays Terminating meanwhile (remove the finalizer by hand to give up). Nothing to revoke (no
// Secret, not an ACME issuer, already revoked) lets it go at once, with an Event saying why.
import { Certificate as CertificateType, SecretType } from '../../../api/resources.ts';
import type { Certificate } from '../../../api/types.ts';
import type { KubeObject, Secret } from '../../../api/meta.ts';
import { REVOKE_ON_DELETE_ANNOTATION } from '../../../api/annotations.ts';
import { AcmeError } from '../../../acme/client.ts';
import { isConflict, isNotFound } from '../../../store/store.ts';
import { splitKey } from '../../../runtime/controller.ts';
import { lookupIssuer } from '../../../shared/issuer-lookup.ts';
import { decodeBase64 } from '../../../shared/parse-memo.ts';
import { certificateBlocks } from '../../../pki/pem.ts';
import type { ControllerContext, ControllerSpec } from '../../context.ts';
import { clientForIssuer } from '../issuer-account.ts';
import { acmeAction } from '../account/registry.ts';
import type { AcmeRuntime } from '../runtime.ts';

const MANAGER = 'certificates-acme-revocation';
export const REVOKE_FINALIZER = 'acme.certsmith.io/revoke-on-delete';
/** RFC 5280 CRLReason cessationOfOperation: the certificate is no longer needed */
const CESSATION_OF_OPERATION = 5;

type CertificateObj = Certificate & KubeObject;

export function wantsRevocation(crt: CertificateObj): boolean {
  return crt.metadata.annotations?.[REVOKE_ON_DELETE_ANNOTATION] === 'true';
}

export function revocationController(ctx: ControllerContext, rt: AcmeRuntime): ControllerSpec {
  const certificates = ctx.informers.informerFor<CertificateObj>(CertificateType);

  async function setFinalizer(crt: CertificateObj, present: boolean): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const fresh = attempt === 0 ? crt : await ctx.store.get<CertificateObj>(CertificateType, crt.metadata.namespace, crt.metadata.name!);
      if (!fresh) return;
      const others = (fresh.metadata.finalizers ?? []).filter((f) => f !== REVOKE_FINALIZER);
      const finalizers = present ? [...others, REVOKE_FINALIZER] : others;
      if (finalizers.length === (fresh.metadata.finalizers ?? []).length && present === (fresh.metadata.finalizers ?? []).includes(REVOKE_FINALIZER)) return;
      try {
        await ctx.store.update(CertificateType, { ...fresh, metadata: { ...fresh.metadata, finalizers } }, { fieldManager: MANAGER });
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
      certificates.onAdd(key);
      certificates.onUpdate((_, n) => key(n));
    },
    async reconcile(key) {
      const { namespace, name } = splitKey(key);
      const crt = certificates.get(namespace, name);
      if (!crt) return;
      const has = (crt.metadata.finalizers ?? []).includes(REVOKE_FINALIZER);
      if (!crt.metadata.deletionTimestamp) {
        // the finalizer follows the annotation while the Certificate lives
        if (wantsRevocation(crt) !== has) await setFinalizer(crt, wantsRevocation(crt));
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
      try {
        await acmeAction('revoke_certificate', () => client.revokeCertificate(leaf.der, CESSATION_OF_OPERATION));
      } catch (e) {
        if (!(e instanceof AcmeError && e.type === 'urn:ietf:params:acme:error:alreadyRevoked')) {
          ctx.recorder.event(crt, 'Warning', 'RevocationFailed', `Revoking the certificate before deletion failed (retrying): ${(e as Error).message}`);
          throw e;
        }
      }
      ctx.recorder.event(crt, 'Normal', 'Revoked', 'The certificate was revoked at the ACME server before deletion (cessationOfOperation)');
      await setFinalizer(crt, false);
    },
  };
}
