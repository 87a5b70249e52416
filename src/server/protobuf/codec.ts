// Kubernetes' protobuf serialization for the built-in kinds: the `k8s\0` envelope around a
// runtime.Unknown whose raw bytes are the object's message. protobufjs does all wire work from
// the upstream .proto files (third_party/kubernetes-proto, reduced by scripts/gen-protobuf.ts to
// the descriptor in kubernetes-messages.ts); this module only maps between the wire's
// conventions and the JSON form the store keeps (times as RFC 3339 strings, bytes as base64,
// managed fields as JSON, quantities and int-or-strings as their JSON scalars, Go's zero values
// as absent fields).
import { createRequire } from 'node:module';
import type protobuf from 'protobufjs';
import { envelopeMessageName, inlineFields, messageNames } from './kinds.ts';
import { kubernetesMessagesJSON } from './kubernetes-messages.ts';

export const protobufMediaType = 'application/vnd.kubernetes.protobuf';
/** what every Kubernetes protobuf body starts with: "k8s" and a zero byte */
const magic = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** A body that is not a Kubernetes protobuf object this server knows; the API answers 400. */
export class ProtobufDecodeError extends Error {}

interface Wire { protobuf: typeof protobuf; root: protobuf.Root; unknownType: protobuf.Type }
let wireCache: Wire | undefined;

/**
 * protobufjs and the message definitions, made on the first protobuf body or answer (kubectl's
 * built-in kinds), not at the server's start. protobufjs is CommonJS, so a synchronous require.
 */
function wire(): Wire {
  if (wireCache) return wireCache;
  const pb = createRequire(import.meta.url)('protobufjs') as typeof protobuf;
  const root = pb.Root.fromJSON(JSON.parse(kubernetesMessagesJSON) as protobuf.INamespace);
  root.resolveAll();
  return (wireCache = { protobuf: pb, root, unknownType: root.lookupType(envelopeMessageName) });
}

const metaPackage = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const timeName = `.${metaPackage}.Time`;
const microTimeName = `.${metaPackage}.MicroTime`;
const fieldsV1Name = `.${metaPackage}.FieldsV1`;
const intOrStringName = '.k8s.io.apimachinery.pkg.util.intstr.IntOrString';
const quantityName = '.k8s.io.apimachinery.pkg.api.resource.Quantity';

/**
 * A field's JSON name. The upstream files name fields as their JSON does, except where the Go
 * field's name was kept ("Webhooks" of the webhook configurations, "Raw" of FieldsV1, which is
 * mapped as a whole): lowerCamelCase, as the JSON tags are.
 */
const jsonName = (field: protobuf.Field) => field.name[0].toLowerCase() + field.name.slice(1);
/** a Go struct embedded inline: its fields are the enclosing JSON object's */
const isInline = (field: protobuf.Field) => inlineFields.has(field.fullName.slice(1));

function messageType(apiVersion: string, kind: string): protobuf.Type | undefined {
  const name = messageNames[`${apiVersion}/${kind}`];
  return name ? wire().root.lookupType(name) : undefined;
}

/** true when objects of this apiVersion and kind (or their list) can be sent as protobuf */
export function hasProtobufSchema(apiVersion: string, kind: string): boolean {
  return messageType(apiVersion, kind) !== undefined;
}

/** true for a Content-Type of Kubernetes protobuf (parameters ignored) */
export function isProtobufMediaType(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0].trim().toLowerCase() === protobufMediaType;
}

const fatalUTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A reader whose strings must be well-formed UTF-8, as for JSON bodies: a string would
 * otherwise be decoded with U+FFFD in place of the bad bytes, and stored so.
 */
function strictReader(bytes: Uint8Array): protobuf.Reader {
  const reader = wire().protobuf.Reader.create(bytes);
  reader.string = function (this: protobuf.Reader) {
    try {
      return fatalUTF8.decode(this.bytes());
    } catch {
      throw new ProtobufDecodeError('the request body is not valid UTF-8');
    }
  };
  return reader;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');
/** 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z */
const minTimeSeconds = Date.parse('0000-01-01T00:00:00Z') / 1000;
const maxTimeSeconds = Date.parse('9999-12-31T23:59:59Z') / 1000;

/** metav1.Time is RFC 3339 to the second in JSON; MicroTime keeps microseconds */
function timeToJSON(value: { seconds?: number; nanos?: number }, micro: boolean, field: string): string | undefined {
  const seconds = value.seconds ?? 0;
  const nanos = value.nanos ?? 0;
  // Go writes a zero Time as an empty message: absent, as it is in JSON
  if (seconds === 0 && nanos === 0) return undefined;
  // RFC 3339 (and Go's MarshalJSON) holds years 0 to 9999 only
  if (!(seconds >= minTimeSeconds && seconds <= maxTimeSeconds)) throw new ProtobufDecodeError(`${field}: the time ${seconds} s from the epoch is out of range (years 0 to 9999)`);
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  return micro ? `${base}.${pad(Math.floor(nanos / 1000), 6)}Z` : `${base}Z`;
}

function timeToWire(value: unknown, micro: boolean): { seconds: number; nanos: number } | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return undefined;
  const seconds = Math.floor(ms / 1000);
  // the fraction is read from the text: Date keeps milliseconds only
  const fraction = /\.(\d+)/.exec(value)?.[1] ?? '';
  const nanos = micro ? Number((fraction + '000000000').slice(0, 9)) : 0;
  return { seconds, nanos };
}

const isZero = (v: unknown) =>
  v === undefined || v === null || v === '' || v === 0 || v === false ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0);

/**
 * protobufjs's plain object → the JSON form. A Go struct cannot tell an absent field from a
 * zero one, so Go writes zero values on the wire; they are dropped here as Go's JSON drops
 * them. Map values are kept whatever they are (an empty label value is a value).
 */
function toJSONForm(type: protobuf.Type, value: Record<string, unknown>, path = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const field = type.fields[key];
    if (!field) continue;
    const convert = (x: unknown): unknown => {
      const t = field.resolvedType;
      if (!(t instanceof wire().protobuf.Type)) return x;
      const full = t.fullName;
      if (full === timeName || full === microTimeName) return timeToJSON(x as { seconds?: number; nanos?: number }, full === microTimeName, `${path}${key}`);
      if (full === quantityName) return (x as { string?: string }).string;
      if (full === intOrStringName) {
        // type 1 is a string, 0 (or absent: Go's zero value) an integer
        const ios = x as { type?: number; intVal?: number; strVal?: string };
        return ios.type === 1 ? (ios.strVal ?? '') : (ios.intVal ?? 0);
      }
      if (full === fieldsV1Name) {
        const raw = (x as { Raw?: string }).Raw;
        if (!raw) return undefined;
        try {
          return JSON.parse(Buffer.from(raw, 'base64').toString('utf8'));
        } catch {
          throw new ProtobufDecodeError('managedFields: fieldsV1 is not JSON');
        }
      }
      return toJSONForm(t, x as Record<string, unknown>, `${path}${key}.`);
    };
    let converted: unknown;
    if (field.map) {
      converted = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, convert(x)]));
    } else if (field.repeated) {
      converted = (v as unknown[]).map(convert);
    } else converted = convert(v);
    if (isZero(converted)) continue;
    if (isInline(field)) Object.assign(out, converted);
    else out[jsonName(field)] = converted;
  }
  return out;
}

/** The JSON form → what protobufjs's fromObject takes. Fields the message lacks are left out. */
function toWireForm(type: protobuf.Type, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    const v = isInline(field) ? value : value[jsonName(field)];
    if (v === undefined || v === null) continue;
    const convert = (x: unknown): unknown => {
      const t = field.resolvedType;
      if (!(t instanceof wire().protobuf.Type)) return x;
      const full = t.fullName;
      if (full === timeName || full === microTimeName) return timeToWire(x, full === microTimeName);
      if (full === fieldsV1Name) return { Raw: Buffer.from(JSON.stringify(x), 'utf8') };
      if (full === quantityName) return typeof x === 'string' || typeof x === 'number' ? { string: String(x) } : undefined;
      if (full === intOrStringName) {
        if (typeof x === 'number') return { type: 0, intVal: x };
        return typeof x === 'string' ? { type: 1, strVal: x } : undefined;
      }
      if (!x || typeof x !== 'object' || Array.isArray(x)) return undefined;
      return toWireForm(t, x as Record<string, unknown>);
    };
    if (field.map) {
      if (typeof v !== 'object' || Array.isArray(v)) continue;
      out[field.name] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, convert(x)]));
    } else if (field.repeated) {
      if (Array.isArray(v)) out[field.name] = v.map(convert).filter((x) => x !== undefined);
    } else {
      const c = convert(v);
      if (c !== undefined) out[field.name] = c;
    }
  }
  return out;
}

/**
 * Decodes a Kubernetes protobuf body into the JSON form of the object, with apiVersion and
 * kind from the envelope. Throws ProtobufDecodeError for anything else.
 */
export function decodeObject(body: Uint8Array): Record<string, unknown> {
  if (body.length < magic.length || !magic.equals(Buffer.from(body.subarray(0, magic.length)))) {
    throw new ProtobufDecodeError('the request body is not a Kubernetes protobuf object: it does not start with "k8s\\x00"');
  }
  let envelope: { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array; contentEncoding?: string; contentType?: string };
  const { unknownType } = wire();
  try {
    envelope = unknownType.toObject(unknownType.decode(strictReader(body.subarray(magic.length)))) as typeof envelope;
  } catch (e) {
    if (e instanceof ProtobufDecodeError) throw e;
    throw new ProtobufDecodeError(`the request body is not a valid protobuf envelope: ${(e as Error).message}`);
  }
  const apiVersion = envelope.typeMeta?.apiVersion ?? '';
  const kind = envelope.typeMeta?.kind ?? '';
  if (envelope.contentEncoding) throw new ProtobufDecodeError(`content encoding ${JSON.stringify(envelope.contentEncoding)} is not supported`);
  const type = messageType(apiVersion, kind);
  if (!type) throw new ProtobufDecodeError(`no kind "${kind}" is registered for version "${apiVersion}" in protobuf: send it as JSON`);
  let plain: Record<string, unknown>;
  try {
    const message = type.decode(strictReader(envelope.raw ?? new Uint8Array()));
    plain = type.toObject(message, { longs: Number, bytes: String, enums: String });
  } catch (e) {
    if (e instanceof ProtobufDecodeError) throw e;
    throw new ProtobufDecodeError(`the request body is not a valid ${kind}: ${(e as Error).message}`);
  }
  return { apiVersion, kind, ...toJSONForm(type, plain) };
}

/** Encodes an object (or list) in its JSON form as Kubernetes protobuf; undefined when its kind has no message here. */
export function encodeObject(obj: { apiVersion?: string; kind?: string; [field: string]: unknown }): Buffer | undefined {
  const apiVersion = obj.apiVersion ?? '';
  const kind = obj.kind ?? '';
  const type = messageType(apiVersion, kind);
  if (!type) return undefined;
  const raw = type.encode(type.fromObject(toWireForm(type, obj as Record<string, unknown>))).finish();
  const { unknownType } = wire();
  const envelope = unknownType.encode(unknownType.fromObject({ typeMeta: { apiVersion, kind }, raw, contentEncoding: '', contentType: '' })).finish();
  return Buffer.concat([magic, envelope]);
}
