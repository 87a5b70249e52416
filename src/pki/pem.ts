export interface PEMBlock { type: string; der: Buffer; pem: string }

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;

export function decodePEMBlocks(text: string): PEMBlock[] {
  const blocks: PEMBlock[] = [];
  for (const m of text.matchAll(PEM_BLOCK)) {
    const body = m[2].replace(/\s+/g, '');
    blocks.push({ type: m[1], der: Buffer.from(body, 'base64'), pem: encodePEM(m[1], Buffer.from(body, 'base64')) });
  }
  return blocks;
}

export function encodePEM(type: string, der: Uint8Array | ArrayBuffer): string {
  const b64 = Buffer.from(der instanceof ArrayBuffer ? new Uint8Array(der) : der).toString('base64');
  return `-----BEGIN ${type}-----\n${b64.replace(/.{1,64}/g, '$&\n')}-----END ${type}-----\n`;
}

/** Each PEM block of a bundle, in order, re-encoded canonically (64-column base64, trailing newline). */
export function splitPEM(bundle: string): string[] {
  return decodePEMBlocks(bundle).map((b) => b.pem);
}

export function pemToDER(pem: string): Buffer {
  const first = decodePEMBlocks(pem)[0];
  if (!first) throw new Error('no PEM block found');
  return first.der;
}

export function certificateBlocks(bundle: string): PEMBlock[] {
  return decodePEMBlocks(bundle).filter((b) => b.type === 'CERTIFICATE');
}
