// Parsing keys and certificates is the hot path of every reconcile; results are memoised by
// content (bounded), so 1,000 Certificates do not re-parse the same PEM on every event.
import { BoundedCache } from '../runtime/bounded-cache.ts';
import type { KeyObject } from 'node:crypto';
import { parsePrivateKey } from '../pki/keys.ts';
import { parseCertificate, type CertificateInfo } from '../pki/parse.ts';
import { parseCSR, type CSRInfo } from '../pki/csr.ts';

const LIMIT = 20_000;

interface Memo<T> {
  (text: string): { value?: T; error?: string };
  /** records a result known without parsing, e.g. a key re-encoded from one already parsed */
  remember(text: string, value: T): void;
}

function memo<T>(fn: (text: string) => T, keyOf: (text: string) => string = (t) => t): Memo<T> {
  const cache = new BoundedCache<string, { value?: T; error?: string }>(LIMIT);
  const put = (key: string, hit: { value?: T; error?: string }) => cache.set(key, hit);
  const lookup = (text: string) => {
    const key = keyOf(text);
    let hit = cache.get(key);
    if (!hit) {
      try {
        hit = { value: fn(text) };
      } catch (e) {
        hit = { error: (e as Error).message };
      }
      put(key, hit);
    }
    return hit;
  };
  return Object.assign(lookup, { remember: (text: string, value: T) => put(keyOf(text), { value }) });
}

export const parseKeyMemo = memo<KeyObject>(parsePrivateKey);
/** Only the first block of a bundle is parsed, so a leaf and its chain share one entry. */
function firstPEMBlock(text: string): string {
  const end = text.indexOf('-----END CERTIFICATE-----');
  return end < 0 ? text : text.slice(text.indexOf('-----BEGIN'), end);
}

export const parseCertMemo = memo<CertificateInfo>(parseCertificate, firstPEMBlock);
export const parseCSRMemo = memo<CSRInfo>(parseCSR);

export function decodeBase64(s: string | undefined): string {
  return s ? Buffer.from(s, 'base64').toString('utf8') : '';
}

export function encodeBase64(s: string | Buffer): string {
  return Buffer.from(s).toString('base64');
}

/** The PEM CSR of a CertificateRequest (spec.request is base64 of the PEM, as in cert-manager). */
export function requestCSR(cr: { spec?: { request?: string } }): { value?: CSRInfo; error?: string } {
  const pem = decodeBase64(cr.spec?.request);
  if (!pem) return { error: 'spec.request is empty' };
  return parseCSRMemo(pem);
}

/** A parsed certificate from the memo, throwing the parse error like parseCertificate does. */
export function parseCertCached(pem: string): CertificateInfo {
  const r = parseCertMemo(pem);
  if (!r.value) throw new Error(r.error);
  return r.value;
}
