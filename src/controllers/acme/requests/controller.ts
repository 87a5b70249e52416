// Shell of the ACME CertificateRequest controller ("certificaterequests-issuer-acme").
import { Certificate, CertificateRequest, Order } from '../../../api/resources.ts';
import type { KubeObject } from '../../../api/meta.ts';
import type { Order as OrderObj } from '../../../api/types.ts';
import { isNotFound, StoreError } from '../../../store/store.ts';
import type { ControllerContext, ControllerSpec } from '../../context.ts';
import { record, forController, componentNameOf } from '../../context.ts';
import { splitKey } from '../../../runtime/controller.ts';
import { type Certificate as CertificateObj, type CertificateRequest as CertificateRequestObj } from '../../../api/types.ts';
import { ariEnabled } from '../../../shared/renewal/renewal-decision.ts';
import { writeStatus } from '../../requests/controller.ts';
import { isExternalIssuerRef, lookupIssuer } from '../../../shared/issuer-lookup.ts';
import { wakeByIssuer, wakeOwners } from '../../../shared/watch.ts';
import { issuerTypeOf } from '../../requests/signing.ts';
import { isTrue } from '../../../api/conditions.ts';
import { decideOrderRequest, isActiveAcmeRequest } from './order-request.ts';
import { retryBackoff } from '../../../runtime/workqueue.ts';
import { CertificateAnnotation } from '../../../api/annotations.ts';

const MANAGER = 'certificaterequests-issuer-acme';

export function acmeRequestController(shared: ControllerContext): ControllerSpec {
  const ctx = forController(shared, MANAGER);
  const requests = ctx.informers.informerFor<CertificateRequestObj>(CertificateRequest);
  const orders = ctx.informers.informerFor<OrderObj>(Order);
  const certificates = ctx.informers.informerFor<CertificateObj>(Certificate);
  return {
    name: MANAGER,
    workers: 4,
    retry: retryBackoff.requestsAndIssuers,
    watch(enqueue) {
      const key = (o: KubeObject) => enqueue(`${o.metadata.namespace}/${o.metadata.name}`);
      // a settled request (issued, failed, denied) has nothing left to order: its status writes wake nothing
      requests.onAdd((r) => { if (isActiveAcmeRequest(r)) key(r); });
      requests.onUpdate((_, n) => { if (isActiveAcmeRequest(n)) key(n); });
      wakeOwners(orders, CertificateRequest, enqueue);
      // An issuer becoming Ready releases the requests that waited for it.
      wakeByIssuer(ctx.informers, requests, key, isActiveAcmeRequest);
    },
    async reconcile(key) {
      const { namespace, name } = splitKey(key);
      const cr = requests.get(namespace, name);
      if (!cr || cr.metadata.deletionTimestamp || !isActiveAcmeRequest(cr)) return;
      if (isExternalIssuerRef(cr.spec.issuerRef)) return;
      const issuer = lookupIssuer(ctx, namespace, cr.spec.issuerRef);
      // Missing or unready issuers are reported on the request by the generic request controller.
      if (!issuer || issuerTypeOf(issuer) !== 'acme' || !isTrue(issuer.status?.conditions, 'Ready')) return;
      // The certificate this request renews, as ARI identifies it: the CA may then exempt the
      // order from rate limits and knows which certificate to expect no more renewals of.
      const crtName = cr.metadata.annotations?.[CertificateAnnotation.certificateName];
      // Only a certificate the CA answered renewal information about: it knows that one.
      const ari = ariEnabled(issuer.spec?.acme) && crtName ? certificates.get(namespace, crtName)?.status?.acme?.ari : undefined;
      const replaces = ari?.suggestedWindow ? ari.certID : undefined;
      const decision = decideOrderRequest({ request: cr, issuer, orders: orders.list(namespace), ...(replaces ? { replaces } : {}) }, ctx.clock.now());
      if (decision.conflict) {
        throw new Error(`found Order resource "${decision.conflict}" not owned by this CertificateRequest, retrying`);
      }
      for (const orderName of decision.deleteOrders) {
        await ctx.store.delete(Order, namespace, orderName).catch((e) => { if (!isNotFound(e)) throw e; });
      }
      if (decision.createOrder) {
        try {
          await ctx.store.create(Order, decision.createOrder, { fieldManager: componentNameOf(MANAGER) });
        } catch (e) {
          // The cache had not seen our own earlier create yet.
          if (!(e instanceof StoreError && e.reason === 'AlreadyExists')) throw e;
          return;
        }
      }
      if (decision.status && JSON.stringify(decision.status) !== JSON.stringify(cr.status ?? {})) {
        await writeStatus(ctx, cr, decision.status);
      }
      record(ctx, cr, decision.events);
    },
  };
}
