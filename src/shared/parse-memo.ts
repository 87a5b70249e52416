// Parsing keys and certificates is the hot path of every reconcile; results are memoised by
// content (bounded), so 1,000 Certificates do not re-parse the same PEM on every event.
// An entry is kept small (issue 17: at 100,000 Certificates the memos were a tenth of the heap):
// it is keyed by a digest of the PEM, not the PEM itself, and its buffers are copied out of
// Node's shared 8 KiB allocation pool, where a 500-byte slice kept a whole pool slab alive.
import { hash, type KeyObject } from 'node:crypto';
import { BoundedCache } from '../runtime/bounded-cache.ts';
import { parsePrivateKey } from '../pki/keys.ts';
import { parseCertificate, type CertificateInfo } from '../pki/parse.ts';
import { parseCSR, readCSR, type CSRInfo } from '../pki/csr.ts';
import { ownedBuffer } from '../pki/der.ts';
import { privateKeyFacts, type KeyFacts } from '../pki/key-facts.ts';

/** entries per memo: the Certificates a burst of reconciles works on at once, with room to spare */
export const PARSE_MEMO_LIMIT = 4096;

interface Memo<T> {
  (text: string): { value?: T; error?: string };
  /** records a result known without parsing, e.g. a key re-encoded from one already parsed */
  remember(text: string, value: T): void;
}

/**
 * SHA-256 in base64: collisions are not a concern, and it is a twentieth of a PEM's size.
 * One-shot: a Hash object cost twice the digest itself, on every lookup (issue 17).
 */
function digestOf(text: string): string {
  return hash('sha256', text, 'base64');
}

function memo<T>(fn: (text: string) => T, keyOf: (text: string) => string = (t) => t, compact: (value: T) => T = (v) => v): Memo<T> {
  const cache = new BoundedCache<string, { value?: T; error?: string }>(PARSE_MEMO_LIMIT);
  const put = (key: string, hit: { value?: T; error?: string }) => cache.set(key, hit);
  const lookup = (text: string) => {
    const key = digestOf(keyOf(text));
    let hit = cache.get(key);
    if (!hit) {
      try {
        hit = { value: compact(fn(text)) };
      } catch (e) {
        hit = { error: (e as Error).message };
      }
      put(key, hit);
    }
    return hit;
  };
  return Object.assign(lookup, { remember: (text: string, value: T) => put(digestOf(keyOf(text)), { value: compact(value) }) });
}

export const parseKeyMemo = memo<KeyObject>(parsePrivateKey);
/**
 * What the policies ask of a Secret's key (algorithm, size, public key), read without OpenSSL's
 * decoder: the trigger and readiness controllers look at every Certificate's key after a restart,
 * far more keys than the memo holds.
 */
export const keyFactsMemo = memo<KeyFacts>(privateKeyFacts);
/** Only the first block of a bundle is parsed, so a leaf and its chain share one entry. */
function firstPEMBlock(text: string): string {
  const end = text.indexOf('-----END CERTIFICATE-----');
  return end < 0 ? text : text.slice(text.indexOf('-----BEGIN'), end);
}

/** the certificate's DER in a buffer of its own, the subject a view of it (it is one of the DER's parts) */
function compactCertificate(c: CertificateInfo): CertificateInfo {
  const der = ownedBuffer(c.der);
  const at = c.subjectDER.buffer === c.der.buffer ? c.subjectDER.byteOffset - c.der.byteOffset : -1;
  const inside = at >= 0 && at + c.subjectDER.length <= der.length;
  return { ...c, der, subjectDER: inside ? der.subarray(at, at + c.subjectDER.length) : ownedBuffer(c.subjectDER) };
}

export const parseCertMemo = memo<CertificateInfo>(parseCertificate, firstPEMBlock, compactCertificate);
/** parseCSR's results own their buffers already */
export const parseCSRMemo = memo<CSRInfo>(parseCSR);
/** CSRs read without a check of their signature (csr.ts readCSR): for comparing a request with its Certificate */
const readCSRMemo = memo<CSRInfo>(readCSR);

export function decodeBase64(s: string | undefined): string {
  return s ? Buffer.from(s, 'base64').toString('utf8') : '';
}

export function encodeBase64(s: string | Buffer): string {
  return Buffer.from(s).toString('base64');
}

/** The PEM CSR of a CertificateRequest (spec.request is base64 of the PEM, as in cert-manager). */
export function requestCSR(cr: { spec?: { request?: string } }): { value?: CSRInfo; error?: string } {
  return csrOfRequest(cr, parseCSRMemo);
}

/**
 * A request's CSR as requestCSR gives it, its signature not checked again: for the policies,
 * which compare an admitted request (whose spec cannot change) with its Certificate and Secret.
 */
export function requestCSRContent(cr: { spec?: { request?: string } }): { value?: CSRInfo; error?: string } {
  return csrOfRequest(cr, readCSRMemo);
}

function csrOfRequest(cr: { spec?: { request?: string } }, read: Memo<CSRInfo>): { value?: CSRInfo; error?: string } {
  const pem = decodeBase64(cr.spec?.request);
  if (!pem) return { error: 'spec.request is empty' };
  return read(pem);
}

/** A parsed certificate from the memo, throwing the parse error like parseCertificate does. */
export function parseCertCached(pem: string): CertificateInfo {
  const r = parseCertMemo(pem);
  if (!r.value) throw new Error(r.error);
  return r.value;
}
