import { CertificateRequest } from '../../../api/resources.ts';
import { isNotFound } from '../../../store/store.ts';
import { createCSR } from '../../../pki/csr.ts';
import { record, type ControllerContext, type ControllerSpec, forController, componentNameOf } from '../../context.ts';
import { certificateCaches, nextKeySecrets, ownedRequests, watchCertificateGraph } from '../gather.ts';
import { CertificateAnnotation } from '../../../api/annotations.ts';
import { type Certificate as CertificateObj, type CertificateRequest as CertificateRequestObj } from '../../../api/types.ts';
import { ownerRefTo } from '../../../shared/ownership.ts';
import { decodeBase64 } from '../../../shared/parse-memo.ts';
import { withCertificate, writeCertificateStatus } from '../shell.ts';
import { failedIssuance } from '../issuing/issuing.ts';
import { requestSpecOf, templateOf } from '../../../shared/certificate-template.ts';
import { decideRequestManager, gateReplacements } from './requestmanager.ts';
import { ReplacementHistories } from '../replacement-backoff.ts';
import { isIssuing, requestManagerWakes } from '../wake.ts';

const MANAGER = 'certificates-request-manager';
/** Annotations of the Certificate that are not copied to its requests (cert-manager's defaults). */
const NOT_COPIED = ['kubectl.kubernetes.io/', 'fluxcd.io/', 'argocd.argoproj.io/'];

export function requestManagerController(shared: ControllerContext): ControllerSpec {
  const ctx = forController(shared, MANAGER);
  const c = certificateCaches(ctx);
  // Replacement backoff per Certificate uid (see gateReplacements); forgotten with the Certificate.
  const replacements = new ReplacementHistories();
  c.certificates.onDelete((crt) => replacements.forget(crt.metadata.uid));
  return {
    name: MANAGER,
    workers: 4,
    watch: (enqueue) => {
      watchCertificateGraph(c, enqueue, requestManagerWakes);
      // Issuing ending is no change the request manager acts on, but a reconcile then forgets
      // the Certificate's replacement history (nothing to do); wake it for that when there is one.
      c.certificates.onUpdate((_, crt) => {
        if (!isIssuing(crt) && replacements.get(crt.metadata.uid ?? '')) enqueue(`${crt.metadata.namespace}/${crt.metadata.name}`);
      });
    },
    reconcile: async (key) => withCertificate(ctx, c, key, async (crt) => {
      const keySecret = nextKeySecrets(c, crt).find((s) => s.metadata.name === crt.status?.nextPrivateKeySecretName);
      const uid = crt.metadata.uid ?? key;
      const gated = gateReplacements(decideRequestManager({ certificate: crt, nextKeySecret: keySecret, requests: ownedRequests(c, crt) }), replacements.get(uid), ctx.clock.now());
      replacements.set(uid, gated.history);
      if (gated.requeueAfterMs !== undefined) {
        ctx.logger.debug({ certificate: key, waitMs: gated.requeueAfterMs }, 'replacing a mismatched CertificateRequest again later (replacement backoff)');
      }
      for (const a of gated.actions) {
        if (a.kind === 'delete') {
          ctx.logger.debug({ certificate: key, request: a.name, why: a.why }, 'deleting CertificateRequest');
          await ctx.store.delete(CertificateRequest, crt.metadata.namespace, a.name).catch((e) => { if (!isNotFound(e)) throw e; });
        } else {
          const keyPem = decodeBase64(keySecret!.data!['tls.key']);
          let csr: string;
          try {
            csr = await createCSR(templateOf(crt.spec), keyPem, crt.spec.signatureAlgorithm);
          } catch (e) {
            // A spec no CSR can express (e.g. a lone surrogate that reached the store without
            // admission) is a failed issuance: recorded, with Events, and retried after the
            // trigger's backoff, never on every reconcile.
            const failed = failedIssuance(crt, 'RequestFailed', `Failed to generate CSR: ${(e as Error).message}`, ctx.clock.now());
            await writeCertificateStatus(ctx, crt, failed.status, MANAGER);
            record(ctx, crt, [failed.event]);
            return undefined;
          }
          let cr: CertificateRequestObj;
          try {
            cr = await ctx.store.create(CertificateRequest, requestFor(crt, a, csr), { fieldManager: componentNameOf(MANAGER) });
          } catch (e) {
            // as cert-manager: said on the Certificate (a request of that name that is not its own,
            // imported from another cluster, blocks it), then retried with the controller's backoff
            ctx.recorder.event(crt, 'Warning', 'RequestFailed', `Failed to create CertificateRequest: ${(e as Error).message}`);
            throw e;
          }
          ctx.recorder.event(crt, 'Normal', 'Requested', `Created new CertificateRequest resource "${cr.metadata.name}"`);
        }
      }
      return gated.requeueAfterMs !== undefined ? { requeueAfterMs: gated.requeueAfterMs } : undefined;
    }),
  };
}

function requestFor(crt: CertificateObj, a: { name: string; revision: number; attempt: number; keySecretName: string }, csrPem: string): CertificateRequestObj {
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(crt.metadata.annotations ?? {})) {
    if (!NOT_COPIED.some((p) => k.startsWith(p))) annotations[k] = v;
  }
  Object.assign(annotations, {
    [CertificateAnnotation.revision]: String(a.revision),
    [CertificateAnnotation.privateKeySecretName]: a.keySecretName,
    [CertificateAnnotation.certificateName]: crt.metadata.name!,
    [CertificateAnnotation.issuanceAttempt]: String(a.attempt),
  });
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: {
      name: a.name,
      namespace: crt.metadata.namespace,
      labels: { ...(crt.metadata.labels ?? {}) },
      annotations,
      ownerReferences: [ownerRefTo(crt)],
    },
    spec: requestSpecOf(crt.spec, csrPem),
  };
}
