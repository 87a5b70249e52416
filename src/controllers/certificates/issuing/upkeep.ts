// Post-issuance upkeep: a Secret whose extra outputs or template metadata no longer match the
// spec is rebuilt from its own key and certificate, with no new request.
import { ManagedLabel, SECRET_TEMPLATE_KEYS_ANNOTATION } from '../../../api/annotations.ts';
import { certificateAnnotations, templateKeysRecord } from './secret.ts';
import { firstViolation, secretPolicies } from '../policies.ts';
import { type Certificate as CertificateObj } from '../../../api/types.ts';
import { type Secret } from '../../../api/meta.ts';
import { combinedPEM, pemToDER } from '../../../pki/encodings.ts';
import { ownerRefTo } from '../../../shared/ownership.ts';
import { isDeepStrictEqual } from 'node:util';

/** The data keys the spec asks for, besides tls.crt/tls.key/ca.crt. */
export function expectedExtraKeys(crt: CertificateObj, hasCA: boolean): string[] {
  const keys: string[] = [];
  for (const f of crt.spec.additionalOutputFormats ?? []) keys.push(f.type === 'DER' ? 'key.der' : 'tls-combined.pem');
  const ks = crt.spec.keystores;
  if (ks?.pkcs12?.create) keys.push('keystore.p12', ...(hasCA ? ['truststore.p12'] : []));
  if (ks?.jks?.create) keys.push('keystore.jks', ...(hasCA ? ['truststore.jks'] : []));
  return keys.sort();
}

const EXTRA = ['key.der', 'tls-combined.pem', 'keystore.p12', 'truststore.p12', 'keystore.jks', 'truststore.jks'];

/** `ownerRef`: --enable-certificate-owner-ref, which makes the Certificate the Secret's owner. */
export function upkeepReason(crt: CertificateObj, secret: Secret | undefined, ownerRef = false): string | undefined {
  if (!secret?.data?.['tls.crt'] || !secret.data['tls.key']) return undefined;
  // a Secret the trigger faults is its to judge: a key and certificate that do not match (rewriting
  // around them would store the pair once more), another issuer's, or another Certificate's (two
  // Certificates naming one Secret would take turns rewriting it for ever)
  if (firstViolation(secretPolicies, { certificate: crt, secret })) return undefined;
  const chainPem = Buffer.from(secret.data['tls.crt'], 'base64').toString();
  const present = Object.keys(secret.data).filter((k) => EXTRA.includes(k)).sort();
  const want = expectedExtraKeys(crt, !!secret.data['ca.crt']);
  if (present.join() !== want.join()) return `additional outputs differ: have [${present.join(', ')}], want [${want.join(', ')}]`;
  const stale = staleOutputFormat(secret.data);
  if (stale) return `${stale} does not hold what tls.key and tls.crt imply`;
  if (secret.metadata.labels?.[ManagedLabel.fao] !== 'true') return `label ${ManagedLabel.fao} missing`;
  // cert-manager's SecretOwnerRefMismatch: the reference follows the flag, both ways
  const ref = secret.metadata.ownerReferences?.find((r) => r.uid === crt.metadata.uid);
  if (ownerRef && !isDeepStrictEqual(ref, ownerRefTo(crt))) return `unexpected Secret Owner Reference value on Secret --enable-certificate-owner-ref=true`;
  if (!ownerRef && ref) return `unexpected Secret Owner Reference on Secret --enable-certificate-owner-ref=false`;
  const tpl = crt.spec.secretTemplate ?? {};
  for (const [k, v] of Object.entries(tpl.labels ?? {})) if (secret.metadata.labels?.[k] !== v) return `secretTemplate label ${k} differs`;
  for (const [k, v] of Object.entries(tpl.annotations ?? {})) if (secret.metadata.annotations?.[k] !== v) return `secretTemplate annotation ${k} differs`;
  // what an earlier template put there and the spec no longer asks for (composeSecret removes it)
  for (const k of (secret.metadata.annotations?.[SECRET_TEMPLATE_KEYS_ANNOTATION] ?? '').split(',').filter(Boolean)) {
    const [where, key] = [k.slice(0, 2), k.slice(2)];
    if (where === 'l:' && !(key in (tpl.labels ?? {}))) return `label ${key} is no longer in spec.secretTemplate`;
    if (where === 'a:' && !(key in (tpl.annotations ?? {}))) return `annotation ${key} is no longer in spec.secretTemplate`;
  }
  // the record of the template keys, stripped by something that copied or replaced the Secret: without it a key
  // later taken out of the template would stay
  if (secret.metadata.annotations?.[SECRET_TEMPLATE_KEYS_ANNOTATION] !== templateKeysRecord(crt)) return `annotation ${SECRET_TEMPLATE_KEYS_ANNOTATION} does not list spec.secretTemplate's keys`;
  // the annotations that describe the certificate (names, subject, the Certificate's name), removed or edited by hand
  const detail = certificateAnnotations(crt, chainPem, undefined);
  for (const [k, v] of Object.entries(detail)) if (secret.metadata.annotations?.[k] !== v) return `annotation ${k} does not describe the certificate`;
  return undefined;
}

/**
 * The first additional output whose content is not what tls.key and tls.crt imply (cert-manager's
 * SecretAdditionalOutputFormatsDataMismatch): presence alone would leave an edited or corrupted
 * tls-combined.pem or key.der in place for good. Compared as bytes, not base64 text.
 */
function staleOutputFormat(data: Record<string, string>): string | undefined {
  const keyPem = Buffer.from(data['tls.key'], 'base64').toString();
  if (data['tls-combined.pem'] !== undefined) {
    const want = combinedPEM(keyPem, Buffer.from(data['tls.crt'], 'base64').toString());
    if (!Buffer.from(data['tls-combined.pem'], 'base64').equals(Buffer.from(want))) return 'tls-combined.pem';
  }
  if (data['key.der'] !== undefined) {
    let want: Buffer | undefined;
    try {
      want = pemToDER(keyPem);
    } catch {
      // An unreadable tls.key is the trigger's to judge (it re-issues); nothing to compare with.
    }
    if (want && !Buffer.from(data['key.der'], 'base64').equals(want)) return 'key.der';
  }
  return undefined;
}
