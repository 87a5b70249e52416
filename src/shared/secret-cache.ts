// The controllers' one Secret cache. Secrets certsmith writes carry cert-manager's
// `controller.cert-manager.io/fao` label and are cached whole; every other Secret is cached as
// metadata only (memory at scale: a cluster's Secrets are mostly not ours). Every controller
// asks for it here, so the cache is the same whichever controller happens to ask first.
import { SecretType } from '../api/resources.ts';
import { ManagedLabel } from '../api/annotations.ts';
import type { Secret } from '../api/meta.ts';
import type { Informer, InformerFactory } from '../runtime/informer.ts';
import type { Store } from '../store/store.ts';

export function secretCache(informers: InformerFactory): Informer<Secret> {
  return informers.informerFor<Secret>(SecretType, { fullObjectsWhen: (s) => s.metadata.labels?.[ManagedLabel.fao] === 'true' });
}

/**
 * A Secret with its data: the cached one when the cache holds it whole (as cert-manager's CA
 * issuer reads its Secret from a lister), else read from the store (a Secret the cache holds as
 * metadata, or one it has not seen yet).
 */
export async function readSecret(ctx: { store: Store; informers: InformerFactory }, namespace: string | undefined, name: string): Promise<Secret | undefined> {
  const cached = secretCache(ctx.informers).get(namespace, name);
  return cached?.data ? cached : ctx.store.get<Secret>(SecretType, namespace, name);
}
