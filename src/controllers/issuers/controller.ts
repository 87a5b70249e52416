// Keeps the Ready condition of SelfSigned and CA issuers (and cluster issuers) current, and marks
// Vault and Venafi issuers not Ready with the reason certsmith cannot sign for them.
import { ClusterIssuer, Issuer } from '../../api/resources.ts';
import type { KubeObject } from '../../api/meta.ts';
import type { ControllerContext, ControllerSpec } from '../context.ts';
import { componentNameOf } from '../context.ts';
import { splitKey } from '../../runtime/controller.ts';
import { issuerResourceNamespace } from '../../shared/issuer-lookup.ts';
import type { AnyIssuer } from '../../api/types.ts';
import { decideIssuerReady, issuerReadyEvent } from './issuer-readiness.ts';
import { retryBackoff } from '../../runtime/workqueue.ts';
import { readSecret, secretCache } from '../../shared/secret-cache.ts';

export function issuerController(ctx: ControllerContext, cluster: boolean): ControllerSpec {
  const type = cluster ? ClusterIssuer : Issuer;
  const issuers = ctx.informers.informerFor<AnyIssuer & KubeObject>(type);
  const secrets = secretCache(ctx.informers);
  return {
    name: cluster ? 'clusterissuers' : 'issuers',
    retry: retryBackoff.requestsAndIssuers,
    watch(enqueue) {
      const key = (o: KubeObject) => enqueue(o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : `${o.metadata.name}`);
      issuers.onAdd(key);
      issuers.onUpdate((_, n) => key(n));
      // A CA issuer becomes ready (or not) when its Secret changes.
      const bySecret = (s: KubeObject) => {
        for (const i of issuers.list()) {
          if (i.spec?.ca?.secretName === s.metadata.name && issuerResourceNamespace(ctx, i) === s.metadata.namespace) key(i);
        }
      };
      secrets.onAdd(bySecret);
      secrets.onUpdate((_, n) => bySecret(n));
      secrets.onDelete(bySecret);
    },
    async reconcile(key) {
      const { namespace, name } = splitKey(key);
      const issuer = issuers.get(cluster ? undefined : namespace, cluster ? key : name);
      if (!issuer || !issuer.spec?.ca && !issuer.spec?.selfSigned && !issuer.spec?.vault && !issuer.spec?.venafi) return;
      const caSecret = issuer.spec.ca ? await readSecret(ctx, issuerResourceNamespace(ctx, issuer), issuer.spec.ca.secretName) : undefined;
      const conditions = decideIssuerReady(issuer, caSecret, ctx.clock.now());
      if (conditions) {
        await ctx.store.updateStatus(type, { ...issuer, status: { ...(issuer.status ?? {}), conditions } } as KubeObject, { fieldManager: componentNameOf('issuers') });
        const event = issuerReadyEvent(issuer, conditions);
        // from cert-manager-issuers (or -clusterissuers), as cert-manager's issuers controllers record them
        if (event) ctx.recorderFor(cluster ? 'clusterissuers' : 'issuers').event(issuer, event.type, event.reason, event.message);
      }
      // A CA certificate expiring changes readiness with no event to wake us.
      return issuer.spec.ca ? { requeueAfterMs: 3_600_000 } : undefined;
    },
  };
}
