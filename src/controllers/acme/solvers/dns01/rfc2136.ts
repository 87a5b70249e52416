import crypto from 'node:crypto';
import dgram from 'node:dgram';
import net from 'node:net';
import { createRequire } from 'node:module';
import type dnsPacket from 'dns-packet';

export type TsigAlgorithm = 'hmac-md5' | 'hmac-sha1' | 'hmac-sha256' | 'hmac-sha512';

/**
 * Each algorithm's name in the TSIG RR (RFC 8945 §6) and its digest. HMAC-MD5 keeps its historical
 * name; it is cert-manager's default when tsigAlgorithm is empty, so existing Issuers depend on it.
 */
const ALGORITHMS: Record<TsigAlgorithm, { wireName: string; digest: string }> = {
  'hmac-md5': { wireName: 'hmac-md5.sig-alg.reg.int', digest: 'md5' },
  'hmac-sha1': { wireName: 'hmac-sha1', digest: 'sha1' },
  'hmac-sha256': { wireName: 'hmac-sha256', digest: 'sha256' },
  'hmac-sha512': { wireName: 'hmac-sha512', digest: 'sha512' },
};

export interface TsigKey {
  name: string;
  algorithm: TsigAlgorithm;
  secretBase64: string;
}

export interface TXTChange {
  /** HOST:PORT of the primary that accepts updates. */
  nameserver: string;
  zone: string;
  fqdn: string;
  value: string;
  ttl?: number;
  tsig: TsigKey;
  timeoutMs?: number;
  /** cert-manager's `protocol`: 'UDP' (default; TCP only when the answer is truncated) or 'TCP' only */
  protocol?: 'TCP' | 'UDP';
}

// dns-packet has these codecs but its type definitions do not declare them.
type Wire = typeof dnsPacket & {
  name: { encode(n: string): Buffer; decode(b: Buffer, offset: number): string; encodingLength(n: string): number };
  answer: { encodingLength(a: dnsPacket.Answer): number };
};
let wireCache: Wire | undefined;
/** dns-packet loads (CommonJS, so synchronously) with the first RFC 2136 message, not with every server start. */
function packets(): Wire {
  return (wireCache ??= createRequire(import.meta.url)('dns-packet') as Wire);
}

const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED', 'YXDOMAIN', 'YXRRSET', 'NXRRSET', 'NOTAUTH', 'NOTZONE'];
const TSIG_ERRORS: Record<number, string> = { 16: 'BADSIG', 17: 'BADKEY', 18: 'BADTIME', 22: 'BADTRUNC' };
const TYPE_TSIG = 250;
const CLASS_ANY = 255;
const CLASS_NONE = 254;
const FUDGE_SECONDS = 300;
const OPCODE_UPDATE = 5;

export class DNSUpdateError extends Error {
  /** RCODE name from the response header, e.g. NOTAUTH. */
  readonly rcode: string;
  /** TSIG error name (BADSIG, BADKEY, BADTIME) when the server reported one. */
  readonly tsigError?: string;
  constructor(message: string, rcode: string, tsigError?: string) {
    super(message);
    this.name = 'DNSUpdateError';
    this.rcode = rcode;
    this.tsigError = tsigError;
  }
}

function absolute(name: string): string {
  return name.endsWith('.') ? name : `${name}.`;
}

/** Uncompressed, lower-cased wire form, as the TSIG MAC input requires (RFC 8945 §4.3.3). */
function canonicalName(name: string): Buffer {
  return packets().name.encode(absolute(name).toLowerCase());
}

function uint16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function uint48(n: number): Buffer {
  const b = Buffer.alloc(6);
  b.writeUIntBE(n, 0, 6);
  return b;
}

interface TsigFields {
  algorithm: string;
  timeSigned: number;
  fudge: number;
  mac: Buffer;
  originalId: number;
  error: number;
  otherData: Buffer;
}

function tsigVariables(keyName: string, f: Omit<TsigFields, 'mac' | 'originalId'>): Buffer {
  return Buffer.concat([
    canonicalName(keyName), uint16(CLASS_ANY), Buffer.alloc(4) /* TTL 0 */, canonicalName(f.algorithm),
    uint48(f.timeSigned), uint16(f.fudge), uint16(f.error), uint16(f.otherData.length), f.otherData,
  ]);
}

function hmac(key: TsigKey, ...parts: Buffer[]): Buffer {
  const h = crypto.createHmac(ALGORITHMS[key.algorithm].digest, Buffer.from(key.secretBase64, 'base64'));
  for (const p of parts) h.update(p);
  return h.digest();
}

/** Appends a TSIG RR to an encoded message and bumps ARCOUNT. Returns the signed message and its MAC. */
export function signMessage(message: Buffer, key: TsigKey, now = Date.now()): { signed: Buffer; mac: Buffer } {
  const fields = { algorithm: ALGORITHMS[key.algorithm].wireName, timeSigned: Math.floor(now / 1000), fudge: FUDGE_SECONDS, error: 0, otherData: Buffer.alloc(0) };
  const mac = hmac(key, message, tsigVariables(key.name, fields));
  const rdata = Buffer.concat([
    canonicalName(fields.algorithm), uint48(fields.timeSigned), uint16(fields.fudge), uint16(mac.length), mac,
    uint16(message.readUInt16BE(0)), uint16(0), uint16(0),
  ]);
  const rr = Buffer.concat([canonicalName(key.name), uint16(TYPE_TSIG), uint16(CLASS_ANY), Buffer.alloc(4), uint16(rdata.length), rdata]);
  const signed = Buffer.concat([message, rr]);
  signed.writeUInt16BE(message.readUInt16BE(10) + 1, 10);
  return { signed, mac };
}

function skipName(buf: Buffer, offset: number): number {
  for (;;) {
    const len = buf[offset];
    if (len === undefined) throw new Error('truncated name');
    if ((len & 0xc0) === 0xc0) return offset + 2;
    if (len === 0) return offset + 1;
    offset += len + 1;
  }
}

/** Finds the trailing TSIG RR of a response: its offset and parsed fields. */
function findTsig(buf: Buffer): { start: number; fields: TsigFields; keyName: string } | undefined {
  const counts = [4, 6, 8, 10].map((o) => buf.readUInt16BE(o));
  if (counts[3] === 0) return undefined;
  let offset = 12;
  for (let i = 0; i < counts[0]; i++) offset = skipName(buf, offset) + 4;
  const rrs = counts[1] + counts[2] + counts[3];
  let start = offset;
  for (let i = 0; i < rrs; i++) {
    start = offset;
    offset = skipName(buf, offset);
    offset += 10 + buf.readUInt16BE(offset + 8);
  }
  const nameEnd = skipName(buf, start);
  if (buf.readUInt16BE(nameEnd) !== TYPE_TSIG) return undefined;
  let p = nameEnd + 10;
  const algorithm = packets().name.decode(buf, p);
  p = skipName(buf, p);
  const timeSigned = buf.readUIntBE(p, 6);
  const fudge = buf.readUInt16BE(p + 6);
  const macLen = buf.readUInt16BE(p + 8);
  const mac = buf.subarray(p + 10, p + 10 + macLen);
  p += 10 + macLen;
  const originalId = buf.readUInt16BE(p);
  const error = buf.readUInt16BE(p + 2);
  const otherLen = buf.readUInt16BE(p + 4);
  const otherData = buf.subarray(p + 6, p + 6 + otherLen);
  return { start, keyName: packets().name.decode(buf, start), fields: { algorithm, timeSigned, fudge, mac, originalId, error, otherData } };
}

/**
 * Checks the response's TSIG (RFC 8945 §5.3): MAC over request MAC + response without its TSIG (original id,
 * ARCOUNT - 1) + TSIG variables. Returns the TSIG error name the server reported, if any.
 */
export function verifyResponse(response: Buffer, requestMac: Buffer, key: TsigKey, now = Date.now()): { tsigError?: string } {
  const tsig = findTsig(response);
  const rcode = RCODES[response.readUInt16BE(2) & 0xf] ?? `RCODE_${response.readUInt16BE(2) & 0xf}`;
  if (!tsig) {
    // A server rejects some requests (FORMERR, NOTIMP, REFUSED before key lookup) without signing the answer;
    // only an unsigned success would be suspicious.
    if (rcode !== 'NOERROR') return { tsigError: undefined };
    throw new DNSUpdateError('DNS response (NOERROR) is not TSIG-signed', rcode);
  }
  const tsigError = tsig.fields.error ? (TSIG_ERRORS[tsig.fields.error] ?? `TSIG error ${tsig.fields.error}`) : undefined;
  // BADKEY/BADSIG answers are unsigned by design; there is no MAC to check.
  if (tsig.fields.mac.length === 0) return { tsigError: tsigError ?? 'unsigned' };
  const body = Buffer.from(response.subarray(0, tsig.start));
  body.writeUInt16BE(tsig.fields.originalId, 0);
  body.writeUInt16BE(body.readUInt16BE(10) - 1, 10);
  const expected = hmac(key, uint16(requestMac.length), requestMac, body, tsigVariables(tsig.keyName, tsig.fields));
  if (expected.length !== tsig.fields.mac.length || !crypto.timingSafeEqual(expected, tsig.fields.mac)) {
    throw new DNSUpdateError(`DNS response (${rcode}) has a bad TSIG MAC`, rcode, 'BADSIG');
  }
  if (Math.abs(Math.floor(now / 1000) - tsig.fields.timeSigned) > tsig.fields.fudge) {
    throw new DNSUpdateError(`DNS response (${rcode}) TSIG time is outside the fudge window`, rcode, 'BADTIME');
  }
  return { tsigError };
}

function splitHostPort(server: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(server.includes(':') && !server.includes(']') && net.isIPv6(server) ? `[${server}]` : server);
  if (!m) throw new Error(`bad nameserver address ${server}`);
  return { host: m[1], port: m[2] ? Number(m[2]) : 53 };
}

function sendUDP(server: { host: string; port: number }, msg: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = dgram.createSocket(net.isIPv6(server.host) ? 'udp6' : 'udp4');
    const id = msg.readUInt16BE(0);
    const timer = setTimeout(() => finish(new Error(`no answer from ${server.host}:${server.port} within ${timeoutMs}ms`)), timeoutMs);
    const finish = (err: Error | null, res?: Buffer) => {
      clearTimeout(timer);
      sock.close();
      if (err) reject(err);
      else resolve(res!);
    };
    sock.on('message', (res) => {
      if (res.length >= 12 && res.readUInt16BE(0) === id) finish(null, res);
    });
    sock.on('error', (e) => finish(e));
    sock.send(msg, server.port, server.host);
  });
}

function sendTCP(server: { host: string; port: number }, msg: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(server.port, server.host);
    let buf = Buffer.alloc(0);
    sock.setTimeout(timeoutMs, () => sock.destroy(new Error(`no answer from ${server.host}:${server.port} (TCP) within ${timeoutMs}ms`)));
    sock.on('connect', () => sock.write(Buffer.concat([uint16(msg.length), msg])));
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        sock.end();
        resolve(buf.subarray(2, 2 + buf.readUInt16BE(0)));
      }
    });
    sock.on('error', reject);
  });
}

/** Sends a signed UPDATE: UDP first and TCP when the answer is truncated, or TCP only. Throws DNSUpdateError unless NOERROR. */
async function sendUpdate(change: TXTChange, update: dnsPacket.Answer, classOverride?: number): Promise<void> {
  const message = Buffer.from(
    packets().encode({
      type: 'query',
      id: crypto.randomInt(0, 65536),
      // dns-packet takes the opcode from the flags word only.
      flags: OPCODE_UPDATE << 11,
      questions: [{ name: absolute(change.zone).slice(0, -1), type: 'SOA', class: 'IN' }],
      authorities: [update],
    } as dnsPacket.Packet),
  );
  if (classOverride !== undefined) {
    // dns-packet knows no class NONE (RFC 2136 "delete this RR"); the update RR is last, so patch its CLASS.
    const rrLength = packets().answer.encodingLength(update);
    const nameLength = packets().name.encodingLength(update.name);
    message.writeUInt16BE(classOverride, message.length - rrLength + nameLength + 2);
  }
  const { signed, mac } = signMessage(message, change.tsig);
  const server = splitHostPort(change.nameserver);
  const timeout = change.timeoutMs ?? 5000;
  let response: Buffer;
  if (change.protocol === 'TCP') {
    response = await sendTCP(server, signed, timeout);
  } else {
    response = await sendUDP(server, signed, timeout);
    if (response.readUInt16BE(2) & 0x0200) response = await sendTCP(server, signed, timeout);
  }
  const code = response.readUInt16BE(2) & 0xf;
  const rcode = RCODES[code] ?? `RCODE_${code}`;
  const { tsigError } = verifyResponse(response, mac, change.tsig);
  if (code !== 0 || tsigError) {
    throw new DNSUpdateError(
      `RFC 2136 update of ${change.fqdn} TXT in zone ${change.zone} via ${change.nameserver} failed: ${rcode}${tsigError ? ` (TSIG ${tsigError})` : ''}`,
      rcode,
      tsigError,
    );
  }
}

function txtData(value: string): Buffer[] {
  const raw = Buffer.from(value);
  const chunks: Buffer[] = [];
  for (let i = 0; i < raw.length; i += 255) chunks.push(raw.subarray(i, i + 255));
  return chunks.length ? chunks : [Buffer.alloc(0)];
}

/** Adds one TXT value at fqdn (RFC 2136 §2.5.1); other values at that name stay. */
export async function addTXT(change: TXTChange): Promise<void> {
  await sendUpdate(change, { name: absolute(change.fqdn).slice(0, -1), type: 'TXT', class: 'IN', ttl: change.ttl ?? 60, data: txtData(change.value) });
}

/** Deletes exactly that TXT value at fqdn (RFC 2136 §2.5.4: class NONE, TTL 0), leaving other values. */
export async function removeTXT(change: Omit<TXTChange, 'ttl'>): Promise<void> {
  await sendUpdate(change, { name: absolute(change.fqdn).slice(0, -1), type: 'TXT', class: 'IN', ttl: 0, data: txtData(change.value) }, CLASS_NONE);
}
