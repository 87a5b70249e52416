// The webhook's TLS identity, managed as cert-manager's webhook does ("dynamic serving"): a CA
// kept in a kubernetes.io/tls Secret (created on first start, replaced when invalid or in the
// last third of its life) that the CA injector copies into the webhook configurations'
// caBundle, and a short-lived serving certificate signed by it that lives in memory only and
// is renewed before it expires. Every replica reads the same Secret, so all of them serve
// certificates that the one injected CA verifies.
import type { KubeObject } from '../api/meta.ts';
import { SecretType } from '../api/resources.ts';
import { CAInjectorAnnotation } from '../api/annotations.ts';
import { parsePrivateKey, publicKeyFingerprint } from '../pki/keys.ts';
import { parseCertificate } from '../pki/parse.ts';
import { createSelfSignedCA, issueServingPair, splitHosts } from '../pki/serving.ts';
import type { Clock } from '../runtime/clock.ts';
import { StoreError, type Store } from '../store/store.ts';

const DAY_MS = 86_400_000;
export const defaultCADurationMs = 365 * DAY_MS;
export const defaultServingDurationMs = 7 * DAY_MS;
export const caCommonName = 'certsmith-webhook-ca';

export interface KeyPair { certPem: string; keyPem: string }

export interface ServingCertificate extends KeyPair {
  notBefore: Date;
  notAfter: Date;
  /** the CA certificate that signed it */
  caPem: string;
}

interface SecretObject extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

const fromBase64 = (v: string | undefined) => (v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8'));

/** The CA pair a Secret holds, or why it cannot serve as the webhook's CA (never quoting the key). */
export function caFromSecret(secret: KubeObject | undefined, now: Date): { ca: KeyPair } | { problem: string } {
  if (!secret) return { problem: 'the Secret does not exist' };
  const data = (secret as SecretObject).data ?? {};
  const certPem = fromBase64(data['tls.crt']);
  const keyPem = fromBase64(data['tls.key']);
  if (!certPem || !keyPem || !data['ca.crt']) return { problem: 'the Secret lacks one of ca.crt, tls.crt, tls.key' };
  let cert;
  try {
    cert = parseCertificate(certPem);
  } catch (e) {
    return { problem: `tls.crt is not a certificate: ${(e as Error).message}` };
  }
  let keyFingerprint: string;
  try {
    keyFingerprint = publicKeyFingerprint(parsePrivateKey(keyPem));
  } catch {
    return { problem: 'tls.key is not a private key' };
  }
  if (keyFingerprint !== cert.publicKeyFingerprint) return { problem: 'tls.key does not match tls.crt' };
  if (!cert.isCA) return { problem: 'tls.crt is not a CA certificate' };
  if (now < cert.notBefore) return { problem: `the CA is not valid before ${cert.notBefore.toISOString()}` };
  // renewed in the last third of its life, as cert-manager's dynamic authority does: clients that
  // cached the old bundle have time to pick up the new one long before the old CA expires
  const renewAt = cert.notAfter.getTime() - (cert.notAfter.getTime() - cert.notBefore.getTime()) / 3;
  if (now.getTime() >= renewAt) return { problem: `the CA expires at ${cert.notAfter.toISOString()} and is due for renewal` };
  return { ca: { certPem, keyPem } };
}

export function createCA(now: Date, durationMs = defaultCADurationMs): Promise<KeyPair> {
  return createSelfSignedCA({ commonName: caCommonName, notBefore: now, durationMs });
}

/**
 * The CA a replaced Secret held, when it still verifies anything: kept in ca.crt beside the new
 * one, so that the injected bundle trusts both the serving certificates other replicas still
 * present (until their next check) and the new ones.
 */
function stillValidPreviousCA(existing: SecretObject | undefined, now: Date): string | undefined {
  const pem = fromBase64(existing?.data?.['tls.crt']);
  if (!pem) return undefined;
  try {
    const cert = parseCertificate(pem);
    return cert.isCA && cert.notAfter > now ? pem : undefined;
  } catch {
    return undefined;
  }
}

function caSecret(namespace: string, name: string, ca: KeyPair, existing: SecretObject | undefined, now: Date): SecretObject {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const previous = stillValidPreviousCA(existing, now);
  const bundle = previous && previous !== ca.certPem ? `${ca.certPem.trimEnd()}\n${previous.trimEnd()}\n` : ca.certPem;
  return {
    apiVersion: 'v1', kind: 'Secret',
    metadata: {
      ...(existing?.metadata ?? {}),
      name, namespace,
      annotations: { ...(existing?.metadata?.annotations ?? {}), [CAInjectorAnnotation.allowDirectInjection]: 'true' },
    },
    // a Secret's type cannot change: an existing one keeps its own
    type: existing?.type ?? 'kubernetes.io/tls',
    data: { ...(existing?.data ?? {}), 'ca.crt': b64(bundle), 'tls.crt': b64(ca.certPem), 'tls.key': b64(ca.keyPem) },
  };
}

export interface EnsureCAOptions {
  store: Store;
  namespace: string;
  secretName: string;
  clock: Clock;
  caDurationMs?: number;
  /** attempts when another replica writes the Secret at the same moment */
  maxAttempts?: number;
  /** first wait between attempts; doubles */
  retryDelayMs?: number;
  onCreated?: (reason: string) => void;
}

const wait = (clock: Clock, ms: number) => new Promise<void>((resolve) => clock.setTimer(ms, resolve));

/**
 * The CA in the Secret, created or replaced when missing, invalid or due. A create that loses
 * the race (409 AlreadyExists) or an update that does (409 Conflict) reads the Secret again:
 * whichever replica won, everyone ends up with its CA.
 */
export async function ensureServingCA(o: EnsureCAOptions): Promise<KeyPair> {
  const attempts = o.maxAttempts ?? 5;
  let delay = o.retryDelayMs ?? 200;
  const where = `Secret ${o.namespace}/${o.secretName}`;
  for (let attempt = 1; ; attempt++) {
    const existing = await o.store.get<SecretObject>(SecretType, o.namespace, o.secretName);
    const read = caFromSecret(existing, o.clock.now());
    if ('ca' in read) return read.ca;
    const ca = await createCA(o.clock.now(), o.caDurationMs);
    try {
      if (existing) await o.store.update(SecretType, caSecret(o.namespace, o.secretName, ca, existing, o.clock.now()), { fieldManager: 'certsmith-webhook' });
      else await o.store.create(SecretType, caSecret(o.namespace, o.secretName, ca, undefined, o.clock.now()), { fieldManager: 'certsmith-webhook' });
      o.onCreated?.(read.problem);
      return ca;
    } catch (e) {
      if (!(e instanceof StoreError && e.code === 409)) throw new Error(`cannot write the webhook CA to ${where}: ${(e as Error).message}`);
      if (attempt >= attempts) throw new Error(`cannot write the webhook CA to ${where}: it kept changing under us (${attempts} attempts): ${e.message}`);
    }
    await wait(o.clock, delay);
    delay *= 2;
  }
}

/** The names of the serving certificate: DNS names as dNSName SANs, IP literals as iPAddress SANs. */
export async function issueServingCertificate(ca: KeyPair, names: readonly string[], now: Date, durationMs = defaultServingDurationMs): Promise<ServingCertificate> {
  const { dnsNames, ipAddresses } = splitHosts(names);
  if (dnsNames.length + ipAddresses.length === 0) throw new Error('the serving certificate needs at least one DNS name or IP address (--dns-names)');
  const { certPem: leafPem, keyPem } = await issueServingPair(ca, {
    hosts: names, commonName: dnsNames[0] ?? ipAddresses[0], usages: ['digital signature', 'key encipherment', 'server auth'], notBefore: now, durationMs,
  });
  const info = parseCertificate(leafPem);
  return { certPem: leafPem, keyPem, notBefore: info.notBefore, notAfter: info.notAfter, caPem: ca.certPem };
}

/** When a serving certificate is renewed: two thirds into its life (5 days of 7 by default). */
export function servingRenewalTime(cert: Pick<ServingCertificate, 'notBefore' | 'notAfter'>): Date {
  const from = cert.notBefore.getTime();
  return new Date(from + (cert.notAfter.getTime() - from) * 2 / 3);
}

export interface ServingCertificatesOptions extends EnsureCAOptions {
  dnsNames: readonly string[];
  servingDurationMs?: number;
  /** how often the Secret is read again, to follow a CA another replica (or a person) replaced */
  caCheckIntervalMs?: number;
  /** first wait after a failed renewal; doubles up to maxRetryDelayMs */
  renewRetryDelayMs?: number;
  maxRetryDelayMs?: number;
  onRotated?: (cert: ServingCertificate) => void;
  onError?: (err: Error, retryInMs: number) => void;
}

/**
 * Keeps a serving certificate current: issues one on start, then re-reads the CA Secret every
 * caCheckIntervalMs and issues a new certificate when it is due or the CA changed. A failed
 * round is retried with a doubling, capped delay; the old certificate serves meanwhile.
 */
export class ServingCertificates {
  private cert?: ServingCertificate;
  private cancel?: () => void;
  private stopped = false;
  private failures = 0;
  /** the round in progress, so that stop() and tests can wait for it */
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly o: ServingCertificatesOptions) {}

  /** Reads (or creates) the CA and issues the first certificate; throws when the API cannot be reached. */
  async start(): Promise<ServingCertificate> {
    await this.round();
    return this.cert!;
  }

  current(): ServingCertificate | undefined {
    return this.cert;
  }

  /** resolves when the round started by the last timer has finished */
  idle(): Promise<void> {
    return this.running;
  }

  stop(): void {
    this.stopped = true;
    this.cancel?.();
  }

  private async round(): Promise<void> {
    const ca = await ensureServingCA(this.o);
    const now = this.o.clock.now();
    const cert = this.cert;
    if (!cert || cert.caPem !== ca.certPem || now >= servingRenewalTime(cert)) {
      this.cert = await issueServingCertificate(ca, this.o.dnsNames, now, this.o.servingDurationMs);
      this.o.onRotated?.(this.cert);
    }
    this.failures = 0;
    this.schedule();
  }

  private schedule(delayMs?: number): void {
    if (this.stopped) return;
    const now = this.o.clock.now().getTime();
    const check = this.o.caCheckIntervalMs ?? 10 * 60_000;
    const untilRenewal = this.cert ? servingRenewalTime(this.cert).getTime() - now : 0;
    const ms = delayMs ?? Math.max(0, Math.min(check, untilRenewal));
    this.cancel?.();
    this.cancel = this.o.clock.setTimer(ms, () => {
      this.running = this.round().catch((e: Error) => {
        this.failures++;
        const base = this.o.renewRetryDelayMs ?? 5_000;
        const retryIn = Math.min(base * 2 ** Math.min(this.failures - 1, 20), this.o.maxRetryDelayMs ?? 5 * 60_000);
        this.o.onError?.(e, retryIn);
        this.schedule(retryIn);
      });
    });
  }
}
