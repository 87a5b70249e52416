// One AcmeClient per ACME account (server + account key + TLS trust), shared by every Issuer
// that uses that account and by the Order and Challenge controllers, so that the directory,
// the account URL and the pool of Replay-Nonces are fetched once and reused.
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
  private readonly clients = new Map<string, AcmeClient>();
  /** issuer uid → config id of its client */
  private readonly byIssuer = new Map<string, string>();

  constructor(private readonly opts: { metrics?: CertsmithMetrics; clientOptions?: Partial<AcmeClientOptions> } = {}) {}

  /** The client of this account, made on first use; a known account URL is handed to a client that lacks one. */
  clientFor(issuerUid: string, config: AccountConfig): AcmeClient {
    const id = configId(config);
    let client = this.clients.get(id);
    if (!client || (config.accountUrl && client.accountUrl && client.accountUrl !== config.accountUrl)) {
      client?.close();
      client = new AcmeClient({
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
      this.clients.set(id, client);
    }
    this.byIssuer.set(issuerUid, id);
    return client;
  }

  /** The client last set up for this issuer, if any. */
  forIssuer(issuerUid: string): AcmeClient | undefined {
    const id = this.byIssuer.get(issuerUid);
    return id ? this.clients.get(id) : undefined;
  }

  forget(issuerUid: string): void {
    this.byIssuer.delete(issuerUid);
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
    this.byIssuer.clear();
  }
}
