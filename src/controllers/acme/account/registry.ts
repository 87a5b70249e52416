// One AcmeClient per ACME issuer (server + account key + TLS trust + its account URL), used by
// that issuer's account, Order, Challenge, ARI and revocation controllers, so that the directory,
// the account URL and the pool of Replay-Nonces are fetched once and reused. Keyed by issuer, as
// cert-manager's account registry is: issuers sharing one key Secret can hold different account
// URLs (one registered again after the CA forgot the account), and each uses its own.
import crypto from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';
import { AcmeClient, type AcmeClientOptions, type AcmeRequestInfo } from '../../../acme/client.ts';
import type { CertsmithMetrics } from '../../../metrics/registry.ts';

export interface AccountConfig {
  server: string;
  accountKeyPem: string;
  /** known account URL (Issuer status.acme.uri); without it the client looks the account up */
  accountUrl?: string;
  caPem?: string;
  skipTLSVerify?: boolean;
}

// cert-manager labels each ACME call with what it was for; the label follows the async call
// chain from the controller down to the HTTP response without threading it through the client.
const actionStore = new AsyncLocalStorage<string>();

/** Runs fn with every ACME request it makes counted under action (e.g. "get_authorization"). */
export function acmeAction<T>(action: string, fn: () => Promise<T>): Promise<T> {
  return actionStore.run(action, fn);
}

/** base64 SHA-256 of the account key's public half: what Issuer status.acme.lastPrivateKeyHash holds. */
export function accountKeyHash(accountKeyPem: string): string {
  const spki = crypto.createPublicKey(accountKeyPem).export({ format: 'der', type: 'spki' });
  return crypto.createHash('sha256').update(spki).digest('base64');
}

function configId(c: AccountConfig): string {
  return JSON.stringify([c.server, accountKeyHash(c.accountKeyPem), c.caPem ?? '', !!c.skipTLSVerify]);
}

export function requestLabels(info: AcmeRequestInfo, action: string) {
  let scheme = '';
  let host = '';
  try {
    const u = new URL(info.url);
    scheme = u.protocol.replace(/:$/, '');
    host = u.host;
  } catch {
    // a URL the server sent us that does not parse still gets counted
  }
  return { scheme, host, action, method: info.method, status: info.status || 999 };
}

export class AcmeClientRegistry {
  /** issuer uid → its client, and the config id it was made for */
  private readonly clients = new Map<string, { id: string; client: AcmeClient }>();

  constructor(private readonly opts: { metrics?: CertsmithMetrics; clientOptions?: Partial<AcmeClientOptions> } = {}) {}

  /**
   * The issuer's client, made on first use and again when its account changes (server, key,
   * trust, or an account URL other than the one its client holds).
   */
  clientFor(issuerUid: string, config: AccountConfig): AcmeClient {
    const id = configId(config);
    const held = this.clients.get(issuerUid);
    if (held && held.id === id && !(config.accountUrl && held.client.accountUrl && held.client.accountUrl !== config.accountUrl)) return held.client;
    held?.client.close();
    const client = new AcmeClient({
      ...this.opts.clientOptions,
      directoryUrl: config.server,
      accountKeyPem: config.accountKeyPem,
      accountUrl: config.accountUrl,
      caPem: config.caPem,
      skipTLSVerify: config.skipTLSVerify,
      onRequest: (info) => {
        this.opts.metrics?.acmeRequest(requestLabels(info, actionStore.getStore() ?? 'unnamed_action'), info.durationMs / 1000);
      },
    });
    this.clients.set(issuerUid, { id, client });
    return client;
  }

  /** The client last set up for this issuer, if any. */
  forIssuer(issuerUid: string): AcmeClient | undefined {
    return this.clients.get(issuerUid)?.client;
  }

  forget(issuerUid: string): void {
    this.clients.get(issuerUid)?.client.close();
    this.clients.delete(issuerUid);
  }

  close(): void {
    for (const { client } of this.clients.values()) client.close();
    this.clients.clear();
  }
}
