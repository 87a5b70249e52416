// cert-manager's KeyUsage enum split into X.509 key usage bits and extended key usage OIDs.

/** Bit positions as in RFC 5280 KeyUsage (digitalSignature = bit 0). */
const KEY_USAGE_BITS: Record<string, number> = {
  'signing': 0,
  'digital signature': 0,
  'content commitment': 1,
  'key encipherment': 2,
  'data encipherment': 3,
  'key agreement': 4,
  'cert sign': 5,
  'crl sign': 6,
  'encipher only': 7,
  'decipher only': 8,
};

const EXT_KEY_USAGE_OIDS: Record<string, string> = {
  'any': '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  'timestamping': '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** The name a parsed certificate reports for a bit or OID (aliases such as 'signing' fold into these). */
const KEY_USAGE_NAME_BY_BIT = ['digital signature', 'content commitment', 'key encipherment', 'data encipherment',
  'key agreement', 'cert sign', 'crl sign', 'encipher only', 'decipher only'];
const EXT_KEY_USAGE_NAME_BY_OID: Record<string, string> = {};
for (const [name, oid] of Object.entries(EXT_KEY_USAGE_OIDS)) {
  if (name !== 's/mime') EXT_KEY_USAGE_NAME_BY_OID[oid] = name;
}

export const DEFAULT_USAGES: readonly string[] = ['digital signature', 'key encipherment'];

export function isKnownUsage(name: string): boolean {
  return name in KEY_USAGE_BITS || name in EXT_KEY_USAGE_OIDS;
}

export interface EncodedUsages { keyUsageBits: number[]; extKeyUsageOids: string[] }

/** As cert-manager's KeyUsagesForCertificateOrCertificateRequest: empty means the defaults, isCA adds cert sign. */
export function encodeUsages(usages: readonly string[] | undefined, isCA: boolean): EncodedUsages {
  const list = usages && usages.length > 0 ? usages : DEFAULT_USAGES;
  const bits = new Set<number>();
  const ekus: string[] = [];
  const unknown: string[] = [];
  if (isCA) bits.add(KEY_USAGE_BITS['cert sign']);
  for (const u of list) {
    if (u in KEY_USAGE_BITS) bits.add(KEY_USAGE_BITS[u]);
    else if (u in EXT_KEY_USAGE_OIDS) { if (!ekus.includes(EXT_KEY_USAGE_OIDS[u])) ekus.push(EXT_KEY_USAGE_OIDS[u]); }
    else unknown.push(u);
  }
  if (unknown.length > 0) throw new Error(`unknown key usages: ${unknown.join(', ')}`);
  return { keyUsageBits: [...bits].sort((a, b) => a - b), extKeyUsageOids: ekus };
}

export function decodeUsages(keyUsageBits: readonly number[], extKeyUsageOids: readonly string[]): string[] {
  const names = keyUsageBits.map((b) => KEY_USAGE_NAME_BY_BIT[b]).filter((n): n is string => n !== undefined);
  for (const oid of extKeyUsageOids) names.push(EXT_KEY_USAGE_NAME_BY_OID[oid] ?? oid);
  return names;
}

/** The usage set a spec really asks for, in canonical names, for order-insensitive comparison. */
export function effectiveUsages(usages: readonly string[] | undefined, isCA: boolean): string[] {
  const { keyUsageBits, extKeyUsageOids } = encodeUsages(usages, isCA);
  return decodeUsages(keyUsageBits, extKeyUsageOids).sort();
}

/** Go's crypto/x509 names, as cmctl prints a certificate's usages: key usages by bit, extended key usages. */
const KEY_USAGE_GO_NAMES = ['Digital Signature', 'Content Commitment', 'Key Encipherment', 'Data Encipherment',
  'Key Agreement', 'Cert Sign', 'CRL Sign', 'Encipher Only', 'Decipher Only'];
const EXT_KEY_USAGE_GO_NAMES: Record<string, string> = {
  'any': 'Any', 'server auth': 'Server Authentication', 'client auth': 'Client Authentication', 'code signing': 'Code Signing',
  'email protection': 'Email Protection', 'ipsec end system': 'IPSEC End System', 'ipsec tunnel': 'IPSEC Tunnel',
  'ipsec user': 'IPSEC User', 'timestamping': 'Time Stamping', 'ocsp signing': 'OCSP Signing',
  'microsoft sgc': 'Microsoft Server Gated Crypto', 'netscape sgc': 'Netscape Server Gated Crypto',
};

/**
 * A parsed certificate's usages (decodeUsages' names) in Go's words: key usages in bit order,
 * extended key usages in the certificate's order; an OID Go has no name for is left out, as Go
 * keeps it apart (UnknownExtKeyUsage).
 */
export function usagesInGoWords(usages: readonly string[]): { keyUsages: string[]; extKeyUsages: string[] } {
  const bits = usages.filter((u) => u in KEY_USAGE_BITS).map((u) => KEY_USAGE_BITS[u]);
  return {
    keyUsages: [...new Set(bits)].sort((a, b) => a - b).map((b) => KEY_USAGE_GO_NAMES[b]),
    extKeyUsages: usages.filter((u) => u in EXT_KEY_USAGE_GO_NAMES).map((u) => EXT_KEY_USAGE_GO_NAMES[u]),
  };
}
