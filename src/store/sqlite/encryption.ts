// Encryption at rest for the embedded store, as kube-apiserver does it: the same
// EncryptionConfiguration file (--encryption-provider-config), the same providers and the same
// stored layout, `k8s:enc:<provider>:v1:<key name>:` followed by the binary payload. The first
// provider of a resource encrypts new writes; every provider is tried on reads, by prefix.
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type CipherGCMTypes, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as YAMLModule from 'yaml';
import { resourceTypes } from '../../api/resources.ts';
import { UnreadableValueError } from '../store.ts';

/** A key of the embedded store: the row a value belongs to. */
export interface StorageKey { grp: string; plural: string; ns: string; name: string }

/** What the `log.value` column holds: JSON text, or the encrypted bytes. */
export type StoredValue = string | Buffer;

export type AESProviderName = 'aesgcm' | 'aescbc';

/** A key's material sits in a KeyObject, so printing a config (or an error holding one) cannot show it. */
export interface ProviderKey { name: string; secret: KeyObject }

export type ProviderConfig = { type: 'identity' } | { type: AESProviderName; keys: ProviderKey[] };

export interface ResourceEncryption {
  /** `secrets`, or `plural.group` for other groups, as kube-apiserver names them */
  resources: string[];
  providers: ProviderConfig[];
}

export interface EncryptionConfiguration { resources: ResourceEncryption[] }

/** A configuration mistake; the message starts with the offending field's path. */
export class EncryptionConfigError extends Error {
  constructor(readonly field: string, problem: string) {
    super(field ? `${field}: ${problem}` : problem);
    this.name = 'EncryptionConfigError';
  }
}

const supportedProviders = ['aesgcm', 'aescbc', 'identity'] as const;
// kube-apiserver's other providers; named so that a file written for it gets a precise refusal
const upstreamOnlyProviders = ['secretbox', 'kms'];
const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function resourceName(grp: string, plural: string): string {
  return grp ? `${plural}.${grp}` : plural;
}

const knownResources = new Set(resourceTypes.map((t) => resourceName(t.group, t.plural)));

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function parseKeys(v: unknown, field: string): ProviderKey[] {
  if (!Array.isArray(v) || v.length === 0) throw new EncryptionConfigError(field, 'must list at least one key');
  const seen = new Set<string>();
  return v.map((k, i) => {
    const at = `${field}[${i}]`;
    if (!isMapping(k)) throw new EncryptionConfigError(at, 'must be a mapping with name and secret');
    if (typeof k.name !== 'string' || k.name === '') throw new EncryptionConfigError(`${at}.name`, 'required');
    // the name is part of the stored prefix, which ':' delimits
    if (k.name.includes(':')) throw new EncryptionConfigError(`${at}.name`, `"${k.name}" must not contain ":"`);
    if (seen.has(k.name)) throw new EncryptionConfigError(`${at}.name`, `"${k.name}" is listed twice in this provider`);
    seen.add(k.name);
    if (k.secret === undefined || k.secret === null || k.secret === '') throw new EncryptionConfigError(`${at}.secret`, 'required');
    // the value is never echoed: it is (or is meant to be) key material
    const secret = typeof k.secret === 'string' ? k.secret.trim() : '';
    const bytes = base64Pattern.test(secret) ? Buffer.from(secret, 'base64') : undefined;
    if (!bytes || ![16, 24, 32].includes(bytes.length)) throw new EncryptionConfigError(`${at}.secret`, 'must be base64 of 16, 24 or 32 bytes');
    const key = { name: k.name, secret: createSecretKey(bytes) };
    bytes.fill(0);
    return key;
  });
}

function parseProvider(v: unknown, field: string): ProviderConfig {
  if (!isMapping(v)) throw new EncryptionConfigError(field, `must be a mapping naming one provider (${supportedProviders.join(', ')})`);
  const names = Object.keys(v);
  if (names.length !== 1) {
    throw new EncryptionConfigError(field, names.length === 0
      ? `names no provider (${supportedProviders.join(', ')})`
      : `names ${names.join(' and ')}; each item names exactly one provider`);
  }
  const name = names[0];
  const body = v[name];
  const at = `${field}.${name}`;
  if (upstreamOnlyProviders.includes(name)) throw new EncryptionConfigError(at, `provider not supported by certsmith (supported: ${supportedProviders.join(', ')})`);
  if (name === 'identity') {
    if (body !== null && body !== undefined && !(isMapping(body) && Object.keys(body).length === 0)) throw new EncryptionConfigError(at, 'takes no settings: write identity: {}');
    return { type: 'identity' };
  }
  if (name === 'aesgcm' || name === 'aescbc') {
    if (!isMapping(body)) throw new EncryptionConfigError(at, 'must be a mapping with keys');
    return { type: name, keys: parseKeys(body.keys, `${at}.keys`) };
  }
  throw new EncryptionConfigError(at, `unknown provider (supported: ${supportedProviders.join(', ')})`);
}

/** Parses and checks an EncryptionConfiguration document (YAML or JSON). */
export function parseEncryptionConfiguration(text: string): EncryptionConfiguration {
  // the YAML parser loads only when a configuration is given, not with every store (CommonJS, so synchronously)
  const { parse: parseYAML, YAMLParseError } = createRequire(import.meta.url)('yaml') as typeof YAMLModule;
  let doc: unknown;
  try {
    doc = parseYAML(text);
  } catch (e) {
    // YAML errors quote the offending line, which may hold a key: only the position is told
    const pos = e instanceof YAMLParseError && e.linePos ? ` at line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '';
    throw new EncryptionConfigError('', `not valid YAML${pos}`);
  }
  if (!isMapping(doc)) throw new EncryptionConfigError('', 'must be an EncryptionConfiguration mapping');
  if (doc.kind !== 'EncryptionConfiguration') throw new EncryptionConfigError('kind', `must be EncryptionConfiguration, not ${JSON.stringify(doc.kind ?? null)}`);
  if (doc.apiVersion !== 'apiserver.config.k8s.io/v1') {
    throw new EncryptionConfigError('apiVersion', `must be apiserver.config.k8s.io/v1, not ${JSON.stringify(doc.apiVersion ?? null)}`);
  }
  if (!Array.isArray(doc.resources) || doc.resources.length === 0) throw new EncryptionConfigError('resources', 'must list at least one entry');
  const claimed = new Map<string, string>();
  const resources = doc.resources.map((r: unknown, i): ResourceEncryption => {
    const at = `resources[${i}]`;
    if (!isMapping(r)) throw new EncryptionConfigError(at, 'must be a mapping with resources and providers');
    if (!Array.isArray(r.resources) || r.resources.length === 0) throw new EncryptionConfigError(`${at}.resources`, 'must list at least one resource, e.g. secrets');
    const names = r.resources.map((n: unknown, j) => {
      const f = `${at}.resources[${j}]`;
      if (typeof n !== 'string' || n === '') throw new EncryptionConfigError(f, 'must be a resource name, e.g. secrets');
      if (n.includes('*')) throw new EncryptionConfigError(f, `"${n}": wildcards are not supported; name each resource, e.g. secrets`);
      if (!knownResources.has(n)) {
        throw new EncryptionConfigError(f, `"${n}" is not a resource certsmith stores (one of: ${[...knownResources].join(', ')})`);
      }
      const earlier = claimed.get(n);
      if (earlier) throw new EncryptionConfigError(f, `"${n}" is already configured at ${earlier}`);
      claimed.set(n, f);
      return n;
    });
    if (!Array.isArray(r.providers) || r.providers.length === 0) throw new EncryptionConfigError(`${at}.providers`, 'must list at least one provider');
    const providers = r.providers.map((p: unknown, j) => parseProvider(p, `${at}.providers[${j}]`));
    return { resources: names, providers };
  });
  return { resources };
}

export function readEncryptionConfiguration(path: string): EncryptionConfiguration {
  return parseEncryptionConfiguration(readFileSync(path, 'utf8'));
}

const encryptedPrefix = Buffer.from('k8s:enc:');

/** One way to read stored values: identity, or one key of one AES provider. */
interface Reader {
  /** empty for identity */
  prefix: Buffer;
  describe: string;
  decrypt(payload: Buffer, aad: Buffer): Buffer;
}

interface Writer { encrypt(plaintext: string, aad: Buffer): Buffer }

interface Chain { writer: Writer | undefined; readers: Reader[]; resource: string }

function gcmCipher(key: KeyObject): CipherGCMTypes {
  return `aes-${(key.symmetricKeySize ?? 0) * 8}-gcm` as CipherGCMTypes;
}

function cbcCipher(key: KeyObject): string {
  return `aes-${(key.symmetricKeySize ?? 0) * 8}-cbc`;
}

// aesgcm: 12-byte nonce | ciphertext | 16-byte tag, the storage key as additional data (upstream's layout)
function gcmEncrypt(key: KeyObject, prefix: Buffer, plaintext: string, aad: Buffer): Buffer {
  const nonce = randomBytes(12);
  const c = createCipheriv(gcmCipher(key), key, nonce);
  c.setAAD(aad);
  const body = c.update(plaintext, 'utf8');
  const last = c.final();
  return Buffer.concat([prefix, nonce, body, last, c.getAuthTag()]);
}

function gcmDecrypt(key: KeyObject, payload: Buffer, aad: Buffer): Buffer {
  if (payload.length < 12 + 16) throw new Error('the stored data is shorter than a nonce and a tag');
  const d = createDecipheriv(gcmCipher(key), key, payload.subarray(0, 12));
  d.setAAD(aad);
  d.setAuthTag(payload.subarray(payload.length - 16));
  return Buffer.concat([d.update(payload.subarray(12, payload.length - 16)), d.final()]);
}

// aescbc: random 16-byte IV | AES-CBC ciphertext with PKCS#7 padding (node's default)
function cbcEncrypt(key: KeyObject, prefix: Buffer, plaintext: string): Buffer {
  const iv = randomBytes(16);
  const c = createCipheriv(cbcCipher(key), key, iv);
  return Buffer.concat([prefix, iv, c.update(plaintext, 'utf8'), c.final()]);
}

function cbcDecrypt(key: KeyObject, payload: Buffer): Buffer {
  if (payload.length < 32 || payload.length % 16 !== 0) throw new Error('the stored data is not an IV and whole blocks');
  const d = createDecipheriv(cbcCipher(key), key, payload.subarray(0, 16));
  return Buffer.concat([d.update(payload.subarray(16)), d.final()]);
}

function chainFor(resource: string, providers: ProviderConfig[]): Chain {
  const readers: Reader[] = [];
  let writer: Writer | undefined;
  providers.forEach((p, i) => {
    if (p.type === 'identity') {
      readers.push({ prefix: Buffer.alloc(0), describe: 'identity', decrypt: (payload) => payload });
      return;
    }
    p.keys.forEach((k, j) => {
      const prefix = Buffer.from(`k8s:enc:${p.type}:v1:${k.name}:`);
      const gcm = p.type === 'aesgcm';
      readers.push({
        prefix, describe: `${p.type} key "${k.name}"`,
        decrypt: gcm ? (payload, aad) => gcmDecrypt(k.secret, payload, aad) : (payload) => cbcDecrypt(k.secret, payload),
      });
      // kube-apiserver encrypts with the first key of the first provider
      if (i === 0 && j === 0) {
        writer = { encrypt: gcm ? (text, aad) => gcmEncrypt(k.secret, prefix, text, aad) : (text) => cbcEncrypt(k.secret, prefix, text) };
      }
    });
  });
  return { writer, readers, resource };
}

const identityOnly: ProviderConfig[] = [{ type: 'identity' }];

/**
 * The store's view of an EncryptionConfiguration: turns an object's JSON into what `log.value`
 * holds and back. Resources the configuration does not name are stored as plain JSON.
 */
export class ValueTransformer {
  private readonly chains = new Map<string, Chain>();
  private readonly plain: Chain;
  /** false when every configured resource writes plain JSON first, so any text value reads as itself */
  readonly encrypts: boolean;

  constructor(config?: EncryptionConfiguration) {
    this.plain = chainFor('', identityOnly);
    for (const r of config?.resources ?? []) {
      for (const name of r.resources) this.chains.set(name, chainFor(name, r.providers));
    }
    this.encrypts = [...this.chains.values()].some((c) => c.writer !== undefined);
  }

  toStorage(key: StorageKey, json: string): StoredValue {
    const chain = this.chains.get(resourceName(key.grp, key.plural));
    if (!chain?.writer) return json;
    return chain.writer.encrypt(json, storageKeyPath(key));
  }

  /**
   * The JSON of a stored value. `stale` says it was not read with the provider (and key) that
   * would write it now, so an unchanged update must still rewrite it: that is what makes
   * "replace every Secret" re-encrypt under a new key, as with kube-apiserver.
   */
  fromStorage(key: StorageKey, stored: StoredValue): { json: string; stale: boolean } {
    const chain = this.chains.get(resourceName(key.grp, key.plural)) ?? this.plain;
    const bytes = typeof stored === 'string' ? undefined : stored;
    if (bytes === undefined || !hasPrefix(bytes, encryptedPrefix)) {
      const at = chain.readers.findIndex((r) => r.prefix.length === 0);
      if (at < 0) {
        throw new UnreadableValueError(
          `${describeKey(key)} is stored unencrypted, and the encryption configuration for ${chain.resource} has no identity provider to read it (add "- identity: {}" as the last provider)`);
      }
      return { json: typeof stored === 'string' ? stored : stored.toString('utf8'), stale: at !== 0 };
    }
    const aad = storageKeyPath(key);
    let failure: string | undefined;
    for (let i = 0; i < chain.readers.length; i++) {
      const r = chain.readers[i];
      if (r.prefix.length === 0 || !hasPrefix(bytes, r.prefix)) continue;
      try {
        return { json: r.decrypt(bytes.subarray(r.prefix.length), aad).toString('utf8'), stale: i !== 0 };
      } catch {
        // the cause (a failed tag, bad padding) says nothing more useful and nothing about the key
        failure = `could not be decrypted with ${r.describe} (wrong key material for that name, or damaged data)`;
      }
    }
    throw new UnreadableValueError(`${describeKey(key)} ${failure ?? `is encrypted with ${describePrefix(bytes)}, which the encryption configuration does not have`}`);
  }
}

function hasPrefix(b: Buffer, prefix: Buffer): boolean {
  return b.length >= prefix.length && b.subarray(0, prefix.length).equals(prefix);
}

/** Upstream authenticates the etcd key with aesgcm, so a value cannot be moved to another object. */
function storageKeyPath(k: StorageKey): Buffer {
  const parts = ['', 'registry', ...(k.grp ? [k.grp] : []), k.plural, ...(k.ns ? [k.ns] : []), k.name];
  return Buffer.from(parts.join('/'));
}

function describeKey(k: StorageKey): string {
  return `${resourceName(k.grp, k.plural)} ${k.ns ? `${k.ns}/` : ''}${k.name}`;
}

/** "aesgcm key "key1"" from `k8s:enc:aesgcm:v1:key1:...`: only the prefix's names, never payload bytes. */
function describePrefix(b: Buffer): string {
  const head = b.subarray(0, 256).toString('latin1');
  const m = /^k8s:enc:([a-z0-9]+):v1:([^:]{1,200}):/.exec(head);
  return m ? `${m[1]} key "${m[2]}"` : 'an unknown provider';
}
