import { SecretType } from '../../../api/resources.ts';
import { isNotFound } from '../../../store/store.ts';
import { encodePrivateKey, generatePrivateKey } from '../../../pki/keys.ts';
import type { ControllerContext, ControllerSpec } from '../../context.ts';
import { record, forController, componentNameOf } from '../../context.ts';
import { certificateCaches, nextKeySecrets, targetSecret, watchCertificateGraph } from '../gather.ts';
import { ManagedLabel } from '../../../api/annotations.ts';
import { type Certificate as CertificateObj } from '../../../api/types.ts';
import { type Secret } from '../../../api/meta.ts';
import { ownerRefTo } from '../../../shared/ownership.ts';
import { decodeBase64, encodeBase64 } from '../../../shared/parse-memo.ts';
import { withCertificate, writeCertificateStatus } from '../shell.ts';
import { keySpecOf } from '../../../shared/certificate-template.ts';
import { decideKeyManager, gateKeyReplacements } from './keymanager.ts';
import { ReplacementHistories } from '../replacement-backoff.ts';
import { keyManagerWakes } from '../wake.ts';

const MANAGER = 'certificates-key-manager';

export function keyManagerController(shared: ControllerContext): ControllerSpec {
  const ctx = forController(shared, MANAGER);
  const c = certificateCaches(ctx);
  const replacements = new ReplacementHistories();
  c.certificates.onDelete((crt) => replacements.forget(crt.metadata.uid));
  return {
    name: MANAGER,
    // Key generation runs on libuv's threads; twice as many workers as threads keep them
    // busy while the other half waits on store writes (RSA issuance is bound by key generation).
    workers: 8,
    watch: (enqueue) => watchCertificateGraph(c, enqueue, keyManagerWakes),
    reconcile: async (key) => withCertificate(ctx, c, key, async (crt) => {
      const ns = crt.metadata.namespace;
      const uid = crt.metadata.uid ?? key;
      const d = gateKeyReplacements(decideKeyManager({ certificate: crt, nextKeySecrets: nextKeySecrets(c, crt), secret: await targetSecret(ctx, c, crt) }), replacements.get(uid), ctx.clock.now());
      replacements.set(uid, d.history);
      record(ctx, crt, d.events);
      for (const a of d.actions) {
        if (a.kind === 'delete') {
          await ctx.store.delete(SecretType, ns, a.name).catch((e) => { if (!isNotFound(e)) throw e; });
        } else if (a.kind === 'setStatusName') {
          const status = { ...(crt.status ?? {}) };
          if (a.name) status.nextPrivateKeySecretName = a.name;
          else delete status.nextPrivateKeySecretName;
          await writeCertificateStatus(ctx, crt, status, MANAGER);
        } else {
          const keyPem = a.reuseKeyFrom
            ? encodePrivateKey(decodeBase64((await targetSecret(ctx, c, crt))?.data?.['tls.key']), 'PKCS8')
            : await generatePrivateKey({ ...keySpecOf(crt.spec), encoding: 'PKCS8' });
          const created = await createKeySecret(ctx, crt, keyPem);
          ctx.recorder.event(crt, 'Normal', a.reuseKeyFrom ? 'Reused' : 'Generated', a.reuseKeyFrom
            ? `Reusing private key stored in existing Secret resource "${crt.spec.secretName}"`
            : `Stored new private key in temporary Secret resource "${created.metadata.name}"`);
          await writeCertificateStatus(ctx, crt, { ...(crt.status ?? {}), nextPrivateKeySecretName: created.metadata.name }, MANAGER);
        }
      }
      return d.requeueAfterMs !== undefined ? { requeueAfterMs: d.requeueAfterMs } : undefined;
    }),
  };
}

async function createKeySecret(ctx: ControllerContext, crt: CertificateObj, keyPem: string): Promise<Secret> {
  const secret: Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      generateName: `${crt.metadata.name}-`,
      namespace: crt.metadata.namespace,
      labels: { [ManagedLabel.nextPrivateKey]: 'true', [ManagedLabel.fao]: 'true' },
      ownerReferences: [ownerRefTo(crt)],
    },
    type: 'Opaque',
    data: { 'tls.key': encodeBase64(keyPem) },
  };
  return ctx.store.create(SecretType, secret, { fieldManager: componentNameOf(MANAGER) });
}
