import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { privateKeyFacts, spkiFacts } from './key-facts.ts';
import { describeKey, parsePrivateKey, publicKeyFingerprint } from './keys.ts';
import { spkiDER } from './spki.ts';
import { encodePEM } from './pem.ts';
import { bitString, oid, readSingle, sequence as seq, TAG, DERReader, contents } from './der.ts';

/** What OpenSSL says of the key: the facts the fast reader must agree with. */
function viaOpenSSL(pem: string) {
  const key = parsePrivateKey(pem);
  return { ...describeKey(key), fingerprint: publicKeyFingerprint(key) };
}

const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const ec = Object.fromEntries((['prime256v1', 'secp384r1', 'secp521r1'] as const)
  .map((c) => [c, crypto.generateKeyPairSync('ec', { namedCurve: c }).privateKey]));
const ed = crypto.generateKeyPairSync('ed25519').privateKey;

/** calls of OpenSSL's private key decoder during fn */
function decodesDuring(fn: () => void): number {
  const decode = crypto.createPrivateKey;
  let calls = 0;
  crypto.createPrivateKey = ((...a: Parameters<typeof decode>) => { calls++; return decode(...a); }) as typeof decode;
  try {
    fn();
  } finally {
    crypto.createPrivateKey = decode;
  }
  return calls;
}

test('RSA and ECDSA keys in every encoding cert-manager writes give the facts OpenSSL gives, without its decoder', () => {
  const pems = [
    rsa.export({ type: 'pkcs1', format: 'pem' }), rsa.export({ type: 'pkcs8', format: 'pem' }),
    ...Object.values(ec).flatMap((k) => [k.export({ type: 'sec1', format: 'pem' }), k.export({ type: 'pkcs8', format: 'pem' })]),
  ] as string[];
  for (const pem of pems) {
    let facts;
    assert.equal(decodesDuring(() => { facts = privateKeyFacts(pem); }), 0, pem.split('\n')[0]);
    assert.deepEqual(facts, viaOpenSSL(pem), pem.split('\n')[0]);
  }
  assert.equal(privateKeyFacts(pems[0]).size, 2048);
  assert.equal(privateKeyFacts(pems[pems.length - 1]).size, 521);
});

test('Ed25519 and PEM text with more than one block are read through OpenSSL, with the same facts', () => {
  const edPem = ed.export({ type: 'pkcs8', format: 'pem' }) as string;
  assert.equal(decodesDuring(() => privateKeyFacts(edPem)), 1);
  assert.deepEqual(privateKeyFacts(edPem), { algorithm: 'Ed25519', size: 0, fingerprint: publicKeyFingerprint(ed) });
  // `openssl ecparam -genkey` writes the curve's parameters first
  const withParams = encodePEM('EC PARAMETERS', oid('1.2.840.10045.3.1.7')) + (ec.prime256v1.export({ type: 'sec1', format: 'pem' }) as string);
  assert.deepEqual(privateKeyFacts(withParams), viaOpenSSL(withParams));
});

/** the SEC1 ECPrivateKey inside a key's export, with its optional fields replaced */
function sec1With(key: crypto.KeyObject, publicKey?: Buffer): string {
  const r = new DERReader(readSingle(key.export({ type: 'sec1', format: 'der' }), TAG.SEQUENCE, 'k').value);
  const version = r.read().der;
  const scalar = r.read().der;
  const params = r.read().der;
  const tail = publicKey ? [Buffer.concat([Buffer.from([0xa1, publicKey.length + 3, 0x03, publicKey.length + 1, 0]), publicKey])] : [];
  return encodePEM('EC PRIVATE KEY', seq(version, scalar, params, ...tail));
}

test('an ECDSA key is the public key of its private scalar, whatever copy of a public key sits beside it', () => {
  const bare = sec1With(ec.prime256v1);
  assert.deepEqual(privateKeyFacts(bare), viaOpenSSL(bare));
  // a public key from another key pair beside the scalar: the scalar decides, as in Go
  const other = crypto.createECDH('prime256v1');
  other.generateKeys();
  const forged = sec1With(ec.prime256v1, other.getPublicKey());
  assert.equal(privateKeyFacts(forged).fingerprint, publicKeyFingerprint(ec.prime256v1));
});

test('an RSA key whose primes do not make its modulus is refused, naming the rule', () => {
  const der = rsa.export({ type: 'pkcs1', format: 'der' });
  const r = new DERReader(readSingle(der, TAG.SEQUENCE, 'k').value);
  const fields: Buffer[] = [];
  while (!r.done) fields.push(r.read().der);
  // the fourth prime byte changed: p·q no longer equals n
  const p = Buffer.from(fields[4]);
  p[p.length - 1] ^= 0x02;
  fields[4] = p;
  assert.throws(() => privateKeyFacts(encodePEM('RSA PRIVATE KEY', seq(...fields))), /invalid private key: its primes do not make its modulus/);
});

test('what is not a private key fails as parsePrivateKey fails, without quoting the input', () => {
  for (const bad of ['', 'hello', encodePEM('PRIVATE KEY', Buffer.from('not der')), encodePEM('EC PRIVATE KEY', seq(Buffer.from([2, 1, 1])))]) {
    let want: string | undefined;
    try {
      parsePrivateKey(bad);
    } catch (e) {
      want = (e as Error).message;
    }
    assert.ok(want, `OpenSSL refuses ${JSON.stringify(bad.slice(0, 30))}`);
    assert.throws(() => privateKeyFacts(bad), { message: want });
  }
});

test('spkiFacts reads RSA and uncompressed EC SubjectPublicKeyInfo as OpenSSL does and leaves other forms to it', () => {
  for (const key of [rsa, ...Object.values(ec)]) {
    const spki = crypto.createPublicKey(key).export({ type: 'spki', format: 'der' });
    const pub = crypto.createPublicKey({ key: spki, format: 'der', type: 'spki' });
    assert.deepEqual(spkiFacts(spki), { ...describeKey(pub), fingerprint: publicKeyFingerprint(pub), spki: spkiDER(pub) });
  }
  assert.equal(spkiFacts(crypto.createPublicKey(ed).export({ type: 'spki', format: 'der' })), undefined);
  // the same P-256 point, compressed: OpenSSL's to decode
  const spki = crypto.createPublicKey(ec.prime256v1).export({ type: 'spki', format: 'der' });
  const r = new DERReader(readSingle(spki, TAG.SEQUENCE, 'spki').value);
  const algorithm = r.read();
  const point = crypto.ECDH.convertKey(r.read().value.subarray(1), 'prime256v1', undefined, undefined, 'compressed') as Buffer;
  assert.equal(contents(algorithm, 'alg').read().tag, TAG.OID);
  assert.equal(spkiFacts(seq(algorithm.der, bitString(point))), undefined);
  assert.equal(spkiFacts(Buffer.from('junk')), undefined);
});
