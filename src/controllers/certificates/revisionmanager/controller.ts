// Revision manager: once a Certificate is Ready, keeps only revisionHistoryLimit requests.
import { isTrue } from '../../../api/conditions.ts';
import { CertificateRequest } from '../../../api/resources.ts';
import { isNotFound } from '../../../store/store.ts';
import type { ControllerContext, ControllerSpec } from '../../context.ts';
import { certificateCaches, ownedRequests, watchCertificateGraph } from '../gather.ts';
import type { Certificate as CertificateObj, CertificateRequest as CertificateRequestObj } from '../../../api/types.ts';
import { revisionOf } from '../../../shared/revisions.ts';
import { withCertificate } from '../shell.ts';
import { revisionManagerWakes } from '../wake.ts';

export function requestsToPrune(crt: CertificateObj, requests: CertificateRequestObj[]): string[] {
  if (!isTrue(crt.status?.conditions, 'Ready')) return [];
  const limit = crt.spec.revisionHistoryLimit ?? 1;
  if (requests.length <= limit) return [];
  const valid = requests.filter((r) => revisionOf(r) !== undefined).sort((a, b) => revisionOf(a)! - revisionOf(b)!);
  // Only issued revisions count towards the limit, so a renewal in flight never costs the
  // current revision its request (upstream deletes it, reference section 9.6).
  const current = crt.status?.revision ?? 0;
  const done = valid.filter((r) => revisionOf(r)! <= current);
  return done.slice(0, Math.max(0, done.length - limit)).map((r) => r.metadata.name!);
}

export function revisionManagerController(ctx: ControllerContext): ControllerSpec {
  const c = certificateCaches(ctx);
  return {
    name: 'certificates-revision-manager',
    watch: (enqueue) => watchCertificateGraph(c, enqueue, revisionManagerWakes),
    reconcile: async (key) => withCertificate(ctx, c, key, async (crt) => {
      for (const name of requestsToPrune(crt, ownedRequests(c, crt))) {
        await ctx.store.delete(CertificateRequest, crt.metadata.namespace, name).catch((e) => { if (!isNotFound(e)) throw e; });
      }
    }),
  };
}
