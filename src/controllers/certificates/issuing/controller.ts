import { StoreError } from '../../../store/store.ts';
import { SecretType } from '../../../api/resources.ts';
import type { ControllerContext, ControllerSpec } from '../../context.ts';
import { record, forController, componentNameOf } from '../../context.ts';
import { certificateCaches, nextKeySecrets, ownedRequests, targetSecret, watchCertificateGraph } from '../gather.ts';
import { CertificateAnnotation } from '../../../api/annotations.ts';
import { type Certificate as CertificateObj, type CertificateRequest as CertificateRequestObj } from '../../../api/types.ts';
import { type Secret } from '../../../api/meta.ts';
import { decodeBase64 } from '../../../shared/parse-memo.ts';
import { decideReadiness, withReadiness } from '../readiness/readiness.ts';
import { withCertificate, writeCertificateStatus } from '../shell.ts';
import { decideIssuing, issuedStatus } from './issuing.ts';
import { buildSecretData, certificateAnnotations, composeSecret, ISSUING_CONTROLLER, MANAGED_KEYS } from './secret.ts';
import { upkeepReason } from './upkeep.ts';
import { encodePrivateKey } from '../../../pki/keys.ts';
import { keySpecOf, templateOf } from '../../../shared/certificate-template.ts';
import { durationMsOf } from '../../../api/defaults.ts';
import { createTemporaryCertificate } from '../../../pki/temporary.ts';
import { isTrue } from '../../../api/conditions.ts';
import type { SecretKeySelector } from '../../../api/types.ts';
import { issuingWakes } from '../wake.ts';

const MANAGER = ISSUING_CONTROLLER;

export function issuingController(shared: ControllerContext): ControllerSpec {
  const ctx = forController(shared, MANAGER);
  const c = certificateCaches(ctx);
  return {
    name: MANAGER,
    workers: 4,
    watch: (enqueue) => watchCertificateGraph(c, enqueue, issuingWakes),
    reconcile: async (key) => withCertificate(ctx, c, key, async (crt) => {
      const requests = ownedRequests(c, crt);
      if (!isTrue(crt.status?.conditions, 'Issuing')) {
        const secret = await targetSecret(ctx, c, crt);
        const why = upkeepReason(crt, secret, !!ctx.options.enableCertificateOwnerRef);
        if (why && secret) {
          ctx.logger.info({ certificate: key, why }, 're-applying Secret data and metadata');
          await writeSecret(ctx, crt, secret, {
            keyPem: decodeBase64(secret.data!['tls.key']), chainPem: decodeBase64(secret.data!['tls.crt']),
            caPem: decodeBase64(secret.data!['ca.crt']) || undefined,
            issuerRef: issuerRefOfSecret(crt, secret),
          });
        }
        return;
      }
      const keySecret = nextKeySecrets(c, crt).find((s) => s.metadata.name === crt.status?.nextPrivateKeySecretName);
      const now = ctx.clock.now();
      const existing = await targetSecret(ctx, c, crt);
      const d = decideIssuing({ certificate: crt, nextKeySecret: keySecret, requests, secret: existing }, now);
      if (d.kind === 'wait') return;
      if (d.kind === 'fail') {
        await writeCertificateStatus(ctx, crt, d.status, MANAGER);
        record(ctx, crt, [d.event]);
        return;
      }
      if (d.kind === 'temporary') {
        const chainPem = await createTemporaryCertificate({
          template: { ...templateOf(crt.spec), usages: crt.spec.usages }, keyPem: d.keyPem, notBefore: now, durationMs: durationMsOf(crt.spec),
        });
        // No issuer annotations: readiness and the trigger tell a temporary certificate by their absence.
        // A stale cache ends in a 409 on this write, and the retry sees the pair and waits.
        await writeSecret(ctx, crt, existing, { keyPem: d.keyPem, chainPem });
        ctx.recorder.event(crt, 'Normal', 'Issuing', 'Issued temporary certificate');
        return;
      }
      const cr = d.request;
      const chainPem = decodeBase64(cr.status!.certificate);
      // A retry after a conflict on the status write, or after a restart, finds the Secret
      // written already: write it once, so readers and the files mirror see one new version.
      const written = alreadyHolds(crt, existing, d.keyPem, chainPem, !!ctx.options.enableCertificateOwnerRef)
        ? existing!
        : await writeSecret(ctx, crt, existing, { keyPem: d.keyPem, chainPem, caPem: decodeBase64(cr.status?.ca) || undefined, issuerRef: cr.spec.issuerRef });
      const status = issuedStatus(crt, d.revision);
      const next: CertificateObj = { ...crt, status };
      const readiness = decideReadiness({ certificate: next, secret: written, currentCR: cr }, now);
      await writeCertificateStatus(ctx, crt, withReadiness(next, readiness.fields), MANAGER);
      ctx.recorder.event(crt, 'Normal', 'Issuing', 'The certificate has been successfully issued');
    }),
  };
}

async function passwordFor(ctx: ControllerContext, crt: CertificateObj, ks: { password?: string; passwordSecretRef?: SecretKeySelector } | undefined): Promise<string | undefined> {
  if (!ks) return undefined;
  if (ks.passwordSecretRef) {
    const s = await ctx.store.get<Secret>(SecretType, crt.metadata.namespace, ks.passwordSecretRef.name);
    if (!s) {
      ctx.recorder.event(crt, 'Warning', 'KeystorePasswordSecretNotFound', `Secret "${ks.passwordSecretRef.name}" holding the keystore password was not found`);
      throw new Error(`keystore password Secret ${crt.metadata.namespace}/${ks.passwordSecretRef.name} not found`);
    }
    const v = decodeBase64(s.data?.[ks.passwordSecretRef.key ?? '']);
    if (!v) throw new Error(`keystore password Secret ${crt.metadata.namespace}/${ks.passwordSecretRef.name} has no key "${ks.passwordSecretRef.key}"`);
    return v;
  }
  if (!ks.password) throw new Error('keystore needs password or passwordSecretRef');
  return ks.password;
}

function alreadyHolds(crt: CertificateObj, secret: Secret | undefined, keyPem: string, chainPem: string, ownerRef: boolean): boolean {
  if (!secret?.data || decodeBase64(secret.data['tls.crt']) !== chainPem) return false;
  const key = decodeBase64(secret.data['tls.key']);
  return key === encodePrivateKey(keyPem, keySpecOf(crt.spec).encoding ?? 'PKCS1') && !upkeepReason(crt, secret, ownerRef);
}

/** The issuer annotations a Secret carries, kept absent when it has none (a temporary certificate). */
function issuerRefOfSecret(crt: CertificateObj, secret: Secret): CertificateRequestObj['spec']['issuerRef'] | undefined {
  const a = secret.metadata.annotations ?? {};
  if (a[CertificateAnnotation.issuerName] === undefined && a[CertificateAnnotation.issuerKind] === undefined && a[CertificateAnnotation.issuerGroup] === undefined) return undefined;
  return {
    name: a[CertificateAnnotation.issuerName] ?? crt.spec.issuerRef.name,
    kind: a[CertificateAnnotation.issuerKind] ?? crt.spec.issuerRef.kind,
    group: a[CertificateAnnotation.issuerGroup] ?? crt.spec.issuerRef.group,
  };
}

async function writeSecret(ctx: ControllerContext, crt: CertificateObj, existing: Secret | undefined,
  m: { keyPem: string; chainPem: string; caPem?: string; issuerRef?: CertificateRequestObj['spec']['issuerRef'] }): Promise<Secret> {
  const ks = crt.spec.keystores;
  const passwords = {
    pkcs12: ks?.pkcs12?.create ? await passwordFor(ctx, crt, ks.pkcs12) : undefined,
    jks: ks?.jks?.create ? await passwordFor(ctx, crt, ks.jks) : undefined,
  };
  const data = await buildSecretData(crt, { ...m, passwords });
  // who set a managed key this write leaves out (a user's ca.crt, kept) is in managedFields, which
  // the cache does not keep: read from the store only then
  const dropping = existing && Object.keys(existing.data ?? {}).some((k) => MANAGED_KEYS.includes(k) && !(k in data));
  const current = dropping ? (await ctx.store.get<Secret>(SecretType, existing.metadata.namespace, existing.metadata.name!)) ?? existing : existing;
  const secret = composeSecret(crt, current, data, certificateAnnotations(crt, m.chainPem, m.issuerRef), !!ctx.options.enableCertificateOwnerRef);
  // One write carries key and certificate together: a reader never sees one without the other.
  try {
    return await (existing
      ? ctx.store.update(SecretType, secret, { fieldManager: componentNameOf(MANAGER) })
      : ctx.store.create(SecretType, secret, { fieldManager: componentNameOf(MANAGER) }));
  } catch (e) {
    // refused for what it holds (an annotation past kube's limits, say): retrying will not help
    // until the spec changes, so it is told where people look, not only in the log
    if (e instanceof StoreError && (e.code === 422 || e.code === 413)) {
      ctx.recorder.event(crt, 'Warning', 'SecretNotWritten', `Secret "${crt.spec.secretName}" could not be written: ${e.message}`);
    }
    throw e;
  }
}

