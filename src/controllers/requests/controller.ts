// The CertificateRequest controller for the issuers certsmith signs with itself (SelfSigned,
// CA): approval (unless turned off), issuer checks, signing, one status write per pass.
import { CertificateRequest, SecretType } from '../../api/resources.ts';
import type { KubeObject } from '../../api/meta.ts';
import { CertificateAnnotation, ManagedLabel } from '../../api/annotations.ts';
import type { ControllerContext, ControllerSpec } from '../context.ts';
import { record } from '../context.ts';
import { splitKey } from '../../runtime/controller.ts';
import type { CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import type { Secret } from '../../api/meta.ts';
import { failed, gateRequest, issued, pending, requestSettled } from './signing.ts';
import { issuerResourceNamespace, lookupIssuer } from '../../shared/issuer-lookup.ts';
import { wakeByIssuer } from '../../shared/watch.ts';
import { signSelfSigned, signWithCA } from './signers.ts';
import { retryBackoff } from '../../runtime/workqueue.ts';

const MANAGER = 'certificaterequests-issuer';

export function requestController(ctx: ControllerContext): ControllerSpec {
  const requests = ctx.informers.informerFor<CertificateRequestObj>(CertificateRequest);
  // the certificate controllers' Secret cache (they register it first): whole objects for the Secrets certsmith manages
  const secrets = ctx.informers.informerFor<Secret>(SecretType);
  /**
   * A signing key's Secret: from the cache when it holds the whole Secret (a CA or key certsmith
   * issued), as cert-manager's signers read theirs from a lister; otherwise from the store. A
   * store read commits the store's open batch of writes early, a quarter of all commits
   * during a burst of issuances (issue 17).
   */
  const signingSecret = async (namespace: string | undefined, name: string): Promise<Secret | undefined> => {
    const cached = secrets.get(namespace, name);
    if (cached && (cached.data || cached.metadata.labels?.[ManagedLabel.fao] === 'true')) return cached;
    return ctx.store.get<Secret>(SecretType, namespace, name);
  };
  return {
    name: MANAGER,
    workers: 4,
    retry: retryBackoff.requestsAndIssuers,
    watch(enqueue) {
      const key = (o: KubeObject) => enqueue(`${o.metadata.namespace}/${o.metadata.name}`);
      // a settled request (issued, failed, denied) is never signed again: its changes wake nothing
      const unsettled = (cr: CertificateRequestObj) => { if (!requestSettled(cr)) key(cr); };
      requests.onAdd(unsettled);
      requests.onUpdate((_, n) => unsettled(n));
      wakeByIssuer(ctx.informers, requests, key, (cr) => !requestSettled(cr));
    },
    async reconcile(key) {
      const { namespace, name } = splitKey(key);
      const cr = requests.get(namespace, name);
      if (!cr || cr.metadata.deletionTimestamp) return;
      const now = ctx.clock.now();
      const issuer = lookupIssuer(ctx, namespace, cr.spec.issuerRef);
      const gate = gateRequest({ request: cr, issuer, autoApprove: !ctx.options.noAutoApprove }, now);
      record(ctx, cr, gate.events);
      if (gate.kind === 'stop') {
        if (gate.status) await writeStatus(ctx, cr, gate.status);
        return;
      }
      if (gate.issuerType === 'acme') {
        // Approved here like any request; the ACME request controller takes it from there.
        if (JSON.stringify(gate.status) !== JSON.stringify(cr.status ?? {})) await writeStatus(ctx, cr, gate.status);
        return;
      }
      let outcome;
      if (gate.issuerType === 'selfSigned') {
        const keyName = cr.metadata.annotations?.[CertificateAnnotation.privateKeySecretName];
        const keySecret = keyName ? await signingSecret(namespace, keyName) : undefined;
        outcome = await signSelfSigned(cr, keySecret, now);
      } else {
        const ca = gate.issuer.spec!.ca!;
        const caSecret = await signingSecret(issuerResourceNamespace(ctx, gate.issuer), ca.secretName);
        outcome = await signWithCA(cr, caSecret, ca.secretName, now, ca);
      }
      if (outcome.kind === 'pending') {
        const p = pending(gate.status, outcome.reason, outcome.message, now);
        record(ctx, cr, p.events);
        await writeStatus(ctx, cr, p.status);
        return { requeueAfterMs: 10_000 };
      }
      const result = outcome.kind === 'failed'
        ? failed(gate.status, outcome.reason, outcome.message, now)
        : issued(gate.status, outcome.certificatePem, outcome.caPem, now);
      await writeStatus(ctx, cr, result.status);
      record(ctx, cr, [result.event]);
    },
  };
}

export async function writeStatus(ctx: ControllerContext, cr: CertificateRequestObj, status: NonNullable<CertificateRequestObj['status']>): Promise<CertificateRequestObj> {
  return ctx.store.updateStatus<CertificateRequestObj>(CertificateRequest, { ...cr, status }, { fieldManager: MANAGER });
}
