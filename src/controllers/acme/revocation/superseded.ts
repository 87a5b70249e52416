// Revoke the key that rotation replaced (issue 16, opt-in): a Certificate annotated
// `acme.certsmith.io/revoke-on-key-rotation: "true"` whose Secret gets a certificate for a new
// private key has its previous certificate revoked at the CA with reason superseded (RFC 5280
// CRLReason 4): the old key is retired, so nothing should go on trusting a certificate for it.
// A renewal that keeps the key (rotationPolicy Never) revokes nothing: the old certificate
// expires on its own and the key is still in use.
//
// The pure part: which certificate a Secret change superseded, and the list of certificates still
// to revoke as kept on the Certificate (an annotation, so a restart or a CA that is down loses none).
import crypto from 'node:crypto';
import type { Secret } from '../../../api/meta.ts';
import { certificateBlocks } from '../../../pki/pem.ts';
import { decodeBase64 } from '../../../shared/parse-memo.ts';

/** RFC 5280 CRLReason superseded */
export const SUPERSEDED = 4;

/** How many replaced certificates wait for revocation at most: an older one past this is dropped (with an Event). */
export const MAX_PENDING = 10;

function leafOf(secret: Secret | undefined): { der: Buffer; spki: string } | undefined {
  const leaf = certificateBlocks(decodeBase64(secret?.data?.['tls.crt']))[0];
  if (!leaf) return undefined;
  try {
    const spki = new crypto.X509Certificate(leaf.der).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    return { der: leaf.der, spki };
  } catch {
    return undefined;
  }
}

/**
 * The certificate (DER, base64) that a Secret update retired together with its key, or undefined:
 * no certificate before, none after (a Secret being emptied is not a rotation), or the same key.
 */
export function supersededCertificate(before: Secret | undefined, after: Secret | undefined): string | undefined {
  const old = leafOf(before);
  const now = leafOf(after);
  if (!old || !now || old.spki === now.spki) return undefined;
  return old.der.toString('base64');
}

/** The pending list in the annotation's value (base64 DER, comma separated). */
export function parsePending(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim()).filter((s) => /^[A-Za-z0-9+/]+=*$/.test(s));
}

/** The list with `added` appended (no duplicates), the oldest dropped past MAX_PENDING. */
export function withPending(pending: string[], added: string[]): { pending: string[]; dropped: string[] } {
  const all = [...pending, ...added.filter((a) => !pending.includes(a))];
  const dropped = all.length > MAX_PENDING ? all.slice(0, all.length - MAX_PENDING) : [];
  return { pending: all.slice(dropped.length), dropped };
}

/** "serial 0A1B..." of a certificate, for Events (never the key, never the whole certificate). */
export function describeCertificate(derBase64: string): string {
  try {
    return `serial ${new crypto.X509Certificate(Buffer.from(derBase64, 'base64')).serialNumber}`;
  } catch {
    return 'an unreadable certificate';
  }
}
