// Whether a program's output shows a private key it was given, in whatever usual encoding: the
// PEM body, or the key's DER (PKCS#8 and the traditional PKCS#1/SEC1 form) or its PEM file as
// base64, base32 or hex, folded, spaced, lower-cased or dumped character by character (od -c).
// redactKeyMaterial recognises encoded bytes by their shape and misses what looks like words once
// cut short (`fold -w 16`, `base32 -w 20`, `od -c`); a deploy hook's output is compared with the
// very key it was handed instead. 12 characters of any of these encodings carry 48 to 72 bits of
// the key: no word, path or message a reload prints matches them by chance.
import { createPrivateKey, createPublicKey } from 'node:crypto';

const WINDOW = 12;

const base32Alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
function base32(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += base32Alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += base32Alphabet[(value << (5 - bits)) & 31];
  return out;
}

/** What a text becomes once what folding, spacing and dumping add is gone: comparable with an encoding. */
const normalized = (text: string) => text.replace(/\\n/g, '').replace(/\s+/g, '').toLowerCase();

const encodingsOf = (der: Buffer) => [der.toString('base64'), der.toString('hex'), base32(der)];

function addWindows(to: Set<string>, encodings: string[]): void {
  for (const e of encodings.map(normalized)) {
    for (let i = 0; i + WINDOW <= e.length; i++) to.add(e.slice(i, i + WINDOW));
  }
}

/**
 * Every WINDOW-character run of the encodings a key is usually shown in, but for those its public
 * half also gives: a private key's DER holds the public key (an RSA modulus, an EC point), which
 * the certificate carries too, and printing the certificate shows nothing secret.
 */
function keyWindows(keyPem: string): Set<string> {
  const windows = new Set<string>();
  addWindows(windows, [keyPem.split('\n').filter((l) => l && !l.startsWith('-----')).join('')]);
  addWindows(windows, encodingsOf(Buffer.from(keyPem, 'utf8')));
  try {
    const key = createPrivateKey(keyPem);
    addWindows(windows, encodingsOf(key.export({ type: 'pkcs8', format: 'der' })));
    const traditional = key.asymmetricKeyType === 'rsa' ? 'pkcs1' : key.asymmetricKeyType === 'ec' ? 'sec1' : undefined;
    if (traditional) addWindows(windows, encodingsOf(key.export({ type: traditional, format: 'der' })));
    // the public key at each byte alignment base64 (3) and base32 (5) can have in another structure
    const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
    const shared = new Set<string>();
    for (let k = 0; k < 5; k++) addWindows(shared, encodingsOf(spki.subarray(k)));
    for (const w of shared) windows.delete(w);
  } catch {
    // not a key Node reads: its PEM text and body are still compared
  }
  return windows;
}

/**
 * The text with every line that shows part of one of the keys replaced by `replacement`: lines
 * alone (a run cut by the dump's own columns) and together (a run folded over short lines).
 */
export function redactKeyDerived(text: string, keyPems: readonly string[], replacement: string): { text: string; found: boolean } {
  if (!keyPems.length || !text) return { text, found: false };
  const windows = new Set<string>();
  for (const pem of keyPems) for (const w of keyWindows(pem)) windows.add(w);
  const lines = text.split('\n');
  // the whole text normalised, with the line each of its characters came from
  let joined = '';
  const lineOf: number[] = [];
  lines.forEach((line, i) => {
    const n = normalized(line);
    joined += n;
    for (let k = 0; k < n.length; k++) lineOf.push(i);
  });
  const shown = new Set<number>();
  for (let i = 0; i + WINDOW <= joined.length; i++) {
    if (!windows.has(joined.slice(i, i + WINDOW))) continue;
    for (let k = i; k < i + WINDOW; k++) shown.add(lineOf[k]);
  }
  if (!shown.size) return { text, found: false };
  // a run of such lines reads as one replacement
  const out = lines.map((l, i) => (shown.has(i) ? replacement : l)).filter((l, i, all) => !(shown.has(i) && i > 0 && shown.has(i - 1) && all[i - 1] === replacement));
  return { text: out.join('\n'), found: true };
}

export function showsKeyMaterial(text: string, keyPems: readonly string[]): boolean {
  return redactKeyDerived(text, keyPems, '').found;
}
