// The CertificateRequest controller for the issuers certsmith signs with itself (SelfSigned,
// CA): approval (unless turned off), issuer checks, signing, one status write per pass.
import { CertificateRequest } from '../../api/resources.ts';
import type { KubeObject } from '../../api/meta.ts';
import { CertificateAnnotation } from '../../api/annotations.ts';
import type { ControllerContext, ControllerSpec } from '../context.ts';
import { forController, record, componentNameOf } from '../context.ts';
import { splitKey } from '../../runtime/controller.ts';
import type { CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import { failed, gateRequest, issued, issuerTypeOf, pending, requestSettled, type IssuerView } from './signing.ts';
import { issuerResourceNamespace, lookupIssuer } from '../../shared/issuer-lookup.ts';
import { wakeByIssuer } from '../../shared/watch.ts';
import { readSecret } from '../../shared/secret-cache.ts';
import { signSelfSigned, signWithCA } from './signers.ts';
import { retryBackoff } from '../../runtime/workqueue.ts';

const MANAGER = 'certificaterequests-issuer';

export function requestController(shared: ControllerContext): ControllerSpec {
  const requests = shared.informers.informerFor<CertificateRequestObj>(CertificateRequest);
  // cert-manager runs a CertificateRequest controller per issuer type, each recording Events as
  // itself (certificaterequests-issuer-ca, -selfsigned, ...); with no issuer there is no type
  const signers = new Map<string, ControllerContext>();
  const signer = (issuer: IssuerView | undefined) => {
    const type = issuer ? issuerTypeOf(issuer) : 'unsupported';
    const name = type === 'unsupported' ? MANAGER : `${MANAGER}-${type.toLowerCase()}`;
    let ctx = signers.get(name);
    if (!ctx) signers.set(name, ctx = forController(shared, name));
    return ctx;
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
      wakeByIssuer(shared.informers, requests, key, (cr) => !requestSettled(cr));
    },
    async reconcile(key) {
      const { namespace, name } = splitKey(key);
      const cr = requests.get(namespace, name);
      if (!cr || cr.metadata.deletionTimestamp) return;
      const now = shared.clock.now();
      const issuer = lookupIssuer(shared, namespace, cr.spec.issuerRef);
      const ctx = signer(issuer);
      const gate = gateRequest({ request: cr, issuer, autoApprove: !ctx.options.noAutoApprove, approveSignerNames: ctx.options.approveSignerNames }, now);
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
        const keySecret = keyName ? await readSecret(ctx, namespace, keyName) : undefined;
        outcome = await signSelfSigned(cr, keySecret, now, gate.issuer.spec?.selfSigned);
      } else {
        const ca = gate.issuer.spec!.ca!;
        const caSecret = await readSecret(ctx, issuerResourceNamespace(ctx, gate.issuer), ca.secretName);
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
  return ctx.store.updateStatus<CertificateRequestObj>(CertificateRequest, { ...cr, status }, { fieldManager: componentNameOf(MANAGER) });
}
