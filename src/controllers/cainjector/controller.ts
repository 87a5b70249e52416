// The CA injector's shell, one controller per target kind over one implementation: reads the
// annotated object, the Certificate and Secret it names, writes decideInjection's object, and is
// woken when a source changes through indexes from source to the targets that name it.
import {
  Certificate,
  APIServiceType, CustomResourceDefinitionType, MutatingWebhookConfigurationType, ValidatingWebhookConfigurationType,
} from '../../api/resources.ts';
import type { KubeObject, Secret } from '../../api/meta.ts';
import { cacheKey, type Informer } from '../../runtime/informer.ts';
import { keyFor, splitKey } from '../../runtime/controller.ts';
import { record, type ControllerContext, type ControllerSpec, forController } from '../context.ts';
import { CERTIFICATES_BY_SECRET, indexCertificatesBySecret } from '../../shared/certificate-index.ts';
import { type Certificate as CertificateObj } from '../../api/types.ts';
import { caSourceOf, decideInjection, injectableFor, sourceSecretName, type Injectable } from './inject.ts';
import { readSecret, secretCache } from '../../shared/secret-cache.ts';
import { CertificateAnnotation } from '../../api/annotations.ts';

const FIELD_MANAGER = 'cert-manager-cainjector';
const BY_CERTIFICATE = 'cainjector.certificate';
const BY_SECRET = 'cainjector.secret';

function ensureIndex<T extends KubeObject>(inf: Informer<T>, name: string, fn: (o: T) => string[]): void {
  if (!inf.hasIndex(name)) inf.addIndex(name, fn);
}

function sourceKey(target: KubeObject, kind: 'certificate' | 'secret'): string[] {
  const parsed = caSourceOf(target);
  return 'source' in parsed && parsed.source.kind === kind ? [cacheKey(parsed.source.namespace, parsed.source.name)] : [];
}

function injectorController(shared: ControllerContext, injectable: Injectable): ControllerSpec {
  const ctx = forController(shared, 'cainjector');
  const targets = ctx.informers.informerFor(injectable.type);
  const certificates = ctx.informers.informerFor<CertificateObj>(Certificate);
  const secrets = secretCache(ctx.informers);
  ensureIndex(targets, BY_CERTIFICATE, (t) => sourceKey(t, 'certificate'));
  ensureIndex(targets, BY_SECRET, (t) => sourceKey(t, 'secret'));
  indexCertificatesBySecret(certificates);
  const apiServerCA = ctx.options.apiServerCABundle;
  const log = ctx.logger.child({ controller: `cainjector-${injectable.type.singular}` });

  return {
    name: `cainjector-${injectable.type.singular}`,
    watch(enqueue) {
      targets.onAdd((t) => enqueue(keyFor(t)));
      targets.onUpdate((_, t) => enqueue(keyFor(t)));
      const fromCertificate = (namespace: string | undefined, name: string) => {
        for (const t of targets.byIndex(BY_CERTIFICATE, cacheKey(namespace, name))) enqueue(keyFor(t));
      };
      const onCertificate = (c: CertificateObj) => fromCertificate(c.metadata.namespace, c.metadata.name!);
      certificates.onAdd(onCertificate);
      certificates.onUpdate((_, c) => onCertificate(c));
      certificates.onDelete(onCertificate);
      // a renewal or CA rotation rewrites the Secret: every target reading it, directly or through a Certificate
      const onSecret = (s: Secret) => {
        const key = cacheKey(s.metadata.namespace, s.metadata.name!);
        for (const t of targets.byIndex(BY_SECRET, key)) enqueue(keyFor(t));
        for (const c of certificates.byIndex(CERTIFICATES_BY_SECRET, key)) onCertificate(c);
        const owner = s.metadata.annotations?.[CertificateAnnotation.certificateName];
        if (owner) fromCertificate(s.metadata.namespace, owner);
      };
      secrets.onAdd(onSecret);
      secrets.onUpdate((_, s) => onSecret(s));
      secrets.onDelete(onSecret);
    },
    async reconcile(key) {
      const { name } = splitKey(key);
      const target = targets.get(undefined, name);
      if (!target) return;
      const parsed = caSourceOf(target);
      let certificate: CertificateObj | undefined;
      let secret: Secret | undefined;
      if ('source' in parsed) {
        if (parsed.source.kind === 'certificate') certificate = certificates.get(parsed.source.namespace, parsed.source.name);
        const secretName = sourceSecretName(parsed.source, certificate);
        if (secretName) secret = await readSecret(ctx, secretName.namespace, secretName.name);
      }
      const decision = decideInjection({ target, injectable, certificate, secret, apiServerCA });
      record(ctx, target, decision.events);
      if (!decision.update) {
        log.debug({ target: name, outcome: decision.outcome }, 'no injection');
        return;
      }
      // a 409 (the object changed since it was cached) is retried by the queue with the newer copy
      await ctx.store.update(injectable.type, decision.update, { fieldManager: FIELD_MANAGER });
      log.info({ target: name }, decision.outcome);
    },
  };
}

/** One controller per target kind: webhook configurations, APIServices, CustomResourceDefinitions. */
export function caInjectorControllers(ctx: ControllerContext): ControllerSpec[] {
  return [ValidatingWebhookConfigurationType, MutatingWebhookConfigurationType, APIServiceType, CustomResourceDefinitionType]
    .map((type) => injectorController(ctx, injectableFor(type)));
}
