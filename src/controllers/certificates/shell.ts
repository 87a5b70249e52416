// Shared pieces of the certificate controller shells: reading the Certificate for a key, and
// writing status with one fresh re-read on a conflict instead of a retry loop.
import { Certificate } from '../../api/resources.ts';
import { isConflict } from '../../store/store.ts';
import type { ControllerContext } from '../context.ts';
import { componentNameOf } from '../context.ts';
import { splitKey } from '../../runtime/controller.ts';
import type { CertificateCaches } from './gather.ts';
import type { Certificate as CertificateObj, CertificateStatus } from '../../api/types.ts';

/**
 * Runs fn with the cached Certificate; if a write in it conflicts, runs it once more with the
 * Certificate read from the store, as the cache may lag behind a write another controller made.
 */
export async function withCertificate<R>(ctx: ControllerContext, c: CertificateCaches, key: string, fn: (crt: CertificateObj) => Promise<R>): Promise<R | undefined> {
  const { namespace, name } = splitKey(key);
  const cached = c.certificates.get(namespace, name);
  if (!cached) return undefined;
  try {
    return await fn(cached);
  } catch (e) {
    if (!isConflict(e)) throw e;
    const fresh = await ctx.store.get<CertificateObj>(Certificate, namespace, name);
    if (!fresh) return undefined;
    return await fn(fresh);
  }
}

export async function writeCertificateStatus(ctx: ControllerContext, crt: CertificateObj, status: CertificateStatus, manager: string): Promise<CertificateObj> {
  return ctx.store.updateStatus<CertificateObj>(Certificate, { ...crt, status }, { fieldManager: componentNameOf(manager) });
}
