export interface PEMBlock { type: string; der: Buffer; pem: string }

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;

/** der and pem are decoded on first use: callers mostly read one block of a bundle, and only one of the two forms. */
function lazyBlock(type: string, body: string): PEMBlock {
  let der: Buffer | undefined;
  return {
    type,
    // Node's base64 decoder skips the line breaks.
    get der() { return (der ??= Buffer.from(body, 'base64')); },
    get pem() { return encodePEM(type, this.der); },
  };
}

export function decodePEMBlocks(text: string): PEMBlock[] {
  const blocks: PEMBlock[] = [];
  for (const m of text.matchAll(PEM_BLOCK)) blocks.push(lazyBlock(m[1], m[2]));
  return blocks;
}

export function encodePEM(type: string, der: Uint8Array | ArrayBuffer): string {
  const b64 = Buffer.from(der instanceof ArrayBuffer ? new Uint8Array(der) : der).toString('base64');
  let body = '';
  for (let i = 0; i < b64.length; i += 64) body += `${b64.slice(i, i + 64)}\n`;
  return `-----BEGIN ${type}-----\n${body}-----END ${type}-----\n`;
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

/**
 * Why a certificate bundle (a Secret's tls.crt or ca.crt) is not one: a PEM block of another type
 * in it, e.g. the private key of a combined PEM. cert-manager parses every block of such a
 * bundle as a certificate (pki.DecodeX509CertificateChainBytes) and refuses it otherwise, and a
 * key there would land in files and chains meant for anyone to read. Undefined when it holds
 * certificates only. Scans the BEGIN lines alone: it runs at every reconcile.
 */
export function nonCertificateBlockIn(bundle: string, name: string): string | undefined {
  for (const m of bundle.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----/g)) {
    if (m[1] !== 'CERTIFICATE') return `error parsing X.509 certificate: ${name} holds a "${m[1]}" PEM block, not a certificate`;
  }
  return undefined;
}

export function certificateBlocks(bundle: string): PEMBlock[] {
  return decodePEMBlocks(bundle).filter((b) => b.type === 'CERTIFICATE');
}
