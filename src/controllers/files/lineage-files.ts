// What one issued Secret becomes on disk: cert-manager's keys under their own names, plus the
// names certbot users already point their servers at (fullchain.pem, privkey.pem, cert.pem,
// chain.pem), so switching from certbot means changing a directory, not a config's file names.
import type { FileOwner } from '../../shared/file-owner.ts';
import { createHash } from 'node:crypto';
import { certificateBlocks, nonCertificateBlockIn } from '../../pki/pem.ts';
import { certificateMatchesKey, parseCertificate, type CertificateInfo } from '../../pki/parse.ts';

export interface LineageFile {
  name: string;
  content: Buffer;
  mode: number;
}

const PRIVATE = 0o600;
const PUBLIC = 0o644;

/** Secret keys copied as they are; anything holding a private key is readable by the owner only. */
const COPIED: [key: string, mode: number][] = [
  ['tls.crt', PUBLIC],
  ['tls.key', PRIVATE],
  ['ca.crt', PUBLIC],
  ['key.der', PRIVATE],
  ['keystore.p12', PRIVATE],
  ['keystore.jks', PRIVATE],
  ['truststore.p12', PUBLIC],
  ['truststore.jks', PUBLIC],
];

/**
 * The files for a Secret's data (base64 values), or undefined when it holds no usable
 * certificate and key yet: a half-written lineage would be worse than the previous one, and so
 * would a key that does not fit the certificate (a Secret edited by hand): a web server would
 * refuse the pair at its reload. The Certificate is re-issued for it; the files wait for that.
 */
export function lineageFiles(data: Record<string, string> | undefined): LineageFile[] | undefined {
  const crt = data?.['tls.crt'] ? Buffer.from(data['tls.crt'], 'base64') : undefined;
  const key = data?.['tls.key'] ? Buffer.from(data['tls.key'], 'base64') : undefined;
  if (!crt?.length || !key?.length) return undefined;
  const crtText = crt.toString('utf8');
  const blocks = certificateBlocks(crtText);
  if (!blocks.length || !certificateMatchesKey(blocks[0].pem, key.toString('utf8'))) return undefined;
  // a key in tls.crt (a combined PEM) would be copied into files anyone may read: the Certificate is re-issued for it (InvalidCertificate)
  if (nonCertificateBlockIn(crtText, 'tls.crt')) return undefined;

  const files: LineageFile[] = [];
  for (const [name, mode] of COPIED) {
    const v = data?.[name];
    if (v) files.push({ name, content: name === 'ca.crt' ? certificatesOnly(Buffer.from(v, 'base64')) : Buffer.from(v, 'base64'), mode });
  }
  const keyText = withTrailingNewline(key.toString('utf8'));
  const chainText = withTrailingNewline(crtText);
  files.push(
    { name: 'fullchain.pem', content: crt, mode: PUBLIC },
    { name: 'privkey.pem', content: key, mode: PRIVATE },
    { name: 'cert.pem', content: Buffer.from(blocks[0].pem), mode: PUBLIC },
    // HAProxy and friends want key and chain in one file; the Secret has it only when asked for
    { name: 'tls-combined.pem', content: data?.['tls-combined.pem'] ? Buffer.from(data['tls-combined.pem'], 'base64') : Buffer.from(keyText + chainText), mode: PRIVATE },
    // always there, as certbot's: empty when the issuer's chain is the root alone (a config naming it must not break)
    { name: 'chain.pem', content: Buffer.from(blocks.slice(1).map((b) => b.pem).join('')), mode: PUBLIC },
  );
  return files.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** ca.crt as the Secret has it, or its certificates alone when it holds anything else (a key pasted into it): no one checks ca.crt before it lands in a 0644 file */
function certificatesOnly(pem: Buffer): Buffer {
  const text = pem.toString('utf8');
  return nonCertificateBlockIn(text, 'ca.crt') ? Buffer.from(certificateBlocks(text).map((b) => b.pem).join('')) : pem;
}

function withTrailingNewline(s: string): string {
  return s.endsWith('\n') ? s : `${s}\n`;
}

/**
 * What a version's files are written for under --files-owner: certsmith's account and the
 * owner's group. Versions from before this (files the owner's, tagged "uid:gid") differ, so
 * they are written again as ours.
 */
export function filesOwnerTag(owner: FileOwner | undefined): string {
  return owner ? `group ${owner.gid}` : '';
}

/**
 * Identifies a version: names, modes and contents, and the owner they are written for, so a
 * changed --files-owner also produces a new version.
 */
export function lineageHash(files: LineageFile[], owner = ''): string {
  const h = createHash('sha256');
  h.update(`owner:${owner}\0`);
  for (const f of files) {
    h.update(`${f.name}\0${f.mode.toString(8)}\0${f.content.length}\0`);
    h.update(f.content);
  }
  return h.digest('hex');
}

/**
 * When the certificate about to be published was issued before the one the files serve now (a
 * store restored from an older backup, a Secret put back by hand): both, for a warning. The
 * store stays the source of truth; this only makes the step back visible.
 */
export function rollbackOf(livePem: string, nextPem: string): { live: CertificateInfo; next: CertificateInfo } | undefined {
  let live: CertificateInfo;
  let next: CertificateInfo;
  try {
    live = parseCertificate(livePem);
    next = parseCertificate(nextPem);
  } catch {
    return undefined;
  }
  return next.notBefore.getTime() < live.notBefore.getTime() ? { live, next } : undefined;
}
