// Reads one key of a Secret a dns01 solver refers to, where cert-manager reads it: the Issuer's
// namespace, or --cluster-resource-namespace for a ClusterIssuer. The value is returned to the
// caller only; messages name the Secret and key, never the value.
import { SecretType } from '../../../../api/resources.ts';
import type { Secret } from '../../../../api/meta.ts';
import type { Challenge } from '../../../../api/types.ts';
import type { ControllerContext } from '../../../context.ts';
import { issuerResourceNamespace, lookupIssuer } from '../../../../shared/issuer-lookup.ts';
import { decodeBase64 } from '../../../../shared/parse-memo.ts';

export interface SecretKeyRef {
  name: string;
  key?: string;
}

/** A provider's configuration or credentials that cannot work: retrying will not help until someone changes them. */
export class ProviderConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderConfigError';
  }
}

/**
 * A provider throttled a call and the client gave up on it (attempts spent, or the server asked for
 * a longer wait than a client waits in one pass): retry no sooner than retryAfterMs from now.
 */
export class ProviderThrottledError extends Error {
  constructor(message: string, readonly retryAfterMs: number) {
    super(message);
    this.name = 'ProviderThrottledError';
  }
}

export async function readSecretKey(ctx: ControllerContext, c: Pick<Challenge, 'metadata' | 'spec'>, ref: SecretKeyRef | undefined, field: string): Promise<string> {
  if (!ref?.name) throw new ProviderConfigError(`${field} is not set`);
  const issuer = lookupIssuer(ctx, c.metadata.namespace, c.spec.issuerRef);
  if (!issuer) throw new Error(`issuer "${c.spec.issuerRef.name}" not found`);
  const ns = issuerResourceNamespace(ctx, issuer);
  const secret = await ctx.store.get<Secret>(SecretType, ns, ref.name);
  if (!secret) throw new ProviderConfigError(`${field}: secret "${ns}/${ref.name}" not found`);
  const value = decodeBase64(secret.data?.[ref.key ?? '']).trim();
  if (!value) throw new ProviderConfigError(`${field}: key "${ref.key ?? ''}" not found in secret "${ns}/${ref.name}"`);
  // a value with a line break inside (a Secret made --from-file of two lines) would be refused by
  // fetch in a header, with a message quoting it whole into the Challenge's Events and status;
  // JSON values (acme-dns accounts, cloud credentials) may span lines, a token or key is printable ASCII
  if (!/^[{[]/.test(value) && /[^\x20-\x7e]/.test(value)) {
    throw new ProviderConfigError(`${field}: secret "${ns}/${ref.name}" key "${ref.key ?? ''}" holds a control character (a line break?) or a non-ASCII one inside its value; a token or key is one line of printable ASCII`);
  }
  return value;
}
