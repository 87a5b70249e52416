// Admission validation for the cert-manager kinds: structural errors from the schema plus the
// rules of cert-manager's validating webhook (internal/apis/certmanager/validation, acme validation).
// Messages follow the webhook's where known; paths are Kubernetes field paths (`spec.dnsNames[2]`).

import { isIP } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { Kind, type TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import { parseCSR } from '../pki/csr.ts';
import { parseLiteralSubject } from '../pki/x509-fields.ts';
import { parseDuration, formatDuration } from './duration.ts';
import { checkRenewalWindows, type WindowProblem } from './renewal-windows.ts';
import { isWellFormed, loneSurrogate } from './unicode.ts';
import type { KubeObject } from './meta.ts';
import { dns1123LabelError, dns1123SubdomainError, labelValueError, qualifiedNameError } from './names.ts';
import { CAInjectorAnnotation, CERT_MANAGER_PREFIX, isCertManagerKey } from './annotations.ts';
import type { ResourceType } from './resources.ts';
import { dns01Providers, issuerTypes, schemasByKind, signatureAlgorithms, tsigAlgorithms } from './schema.ts';
import { defaultCertificateDurationMs, minimumCertificateDurationMs, minimumRenewBeforeMs } from './defaults.ts';

export type FieldErrorReason = 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueNotSupported' | 'FieldValueDuplicate';

export interface FieldError {
  /** Kubernetes field path, e.g. `spec.renewal.windows[0].cron[1]`. */
  field: string;
  message: string;
  reason: FieldErrorReason;
  /** The offending value, for Invalid/NotSupported/Duplicate messages. */
  value?: unknown;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter(isStr) : []);
const child = (p: string, k: string) => (p ? `${p}.${k}` : k);
const index = (p: string, i: number) => `${p}[${i}]`;
const mapKey = (p: string, k: string) => `${p}[${k}]`;

class Errors {
  readonly list: FieldError[] = [];
  required(field: string, message = ''): void { this.list.push({ field, message, reason: 'FieldValueRequired' }); }
  invalid(field: string, value: unknown, message: string): void { this.list.push({ field, message, reason: 'FieldValueInvalid', value }); }
  forbidden(field: string, message: string): void { this.list.push({ field, message, reason: 'FieldValueForbidden' }); }
  notSupported(field: string, value: unknown, supported: readonly string[]): void {
    this.list.push({ field, message: `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`, reason: 'FieldValueNotSupported', value });
  }
  duplicate(field: string, value: unknown): void { this.list.push({ field, message: '', reason: 'FieldValueDuplicate', value }); }
}

// ---------------------------------------------------------------------------------------------
// entry points

/**
 * Validates an object of `type` as the API server would on create (no `old`) or update.
 * Returns every error found, not just the first; an empty list means the object is accepted.
 */
export function validate(type: ResourceType, obj: KubeObject, old?: KubeObject): FieldError[] {
  const schemaErrors = structuralErrors(type, obj);
  const rules = new Errors();
  // Every string of a cert-manager object, keys included: a lone surrogate cannot be put in a
  // certificate, and a request built from one never matches its spec (issue 12, finding 2).
  if (type.group.endsWith('cert-manager.io')) validateWellFormed(obj, '', rules);
  validateMetadata(type, obj, rules);
  const spec = isObj(obj.spec) ? obj.spec : undefined;
  const oldSpec = old && isObj(old.spec) ? old.spec : undefined;
  if (type.group === 'cert-manager.io') {
    switch (type.kind) {
      case 'Certificate': if (spec) validateCertificateSpec(spec, 'spec', rules); break;
      case 'CertificateRequest': validateCertificateRequest(obj, old, rules); break;
      case 'Issuer': case 'ClusterIssuer': if (spec) validateIssuerSpec(spec, 'spec', rules); break;
    }
  } else if (type.group === 'acme.cert-manager.io') {
    if (spec && type.kind === 'Order') validateIssuerRef(spec.issuerRef, 'spec.issuerRef', rules);
    if (spec && type.kind === 'Challenge') {
      validateIssuerRef(spec.issuerRef, 'spec.issuerRef', rules);
      if (isObj(spec.solver)) validateSolver(spec.solver, 'spec.solver', rules);
    }
    if (old && !isDeepStrictEqual(spec, oldSpec)) rules.forbidden('spec', 'field is immutable');
  }
  return mergeErrors(schemaErrors, rules.list);
}

/**
 * Paths of fields the schema does not know, for `fieldValidation=Strict|Warn`. Fields under
 * objects that cert-manager leaves open (provider configs, pod specs) are never reported.
 */
export function findUnknownFields(type: ResourceType, obj: unknown): string[] {
  const schema = schemasByKind[type.kind];
  const out: string[] = [];
  if (!isObj(obj)) return out;
  for (const k of Object.keys(obj)) {
    if (!['apiVersion', 'kind', 'metadata', 'spec', 'status'].includes(k) && !(k in extraTopLevelFields(type))) out.push(k);
  }
  if (isObj(obj.metadata)) {
    for (const k of Object.keys(obj.metadata)) if (!objectMetaFields.has(k)) out.push(`metadata.${k}`);
  }
  if (schema) {
    const props = (schema as unknown as { properties: Record<string, TSchema> }).properties;
    for (const k of ['spec', 'status'] as const) if (k in obj) walkUnknown(props[k], obj[k], k, out);
  }
  return out;
}

/** The message Kubernetes puts in a 422 Status: `Kind.group "name" is invalid: [path: Reason: msg, ...]`. */
export function invalidObjectMessage(type: ResourceType, name: string, errors: FieldError[]): string {
  const gk = type.group ? `${type.kind}.${type.group}` : type.kind;
  const parts = errors.map(fieldErrorText);
  const body = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  return `${gk} ${JSON.stringify(name)} is invalid: ${body}`;
}

export function fieldErrorText(e: FieldError): string {
  const v = e.value === undefined ? '' : typeof e.value === 'string' ? JSON.stringify(e.value) : typeof e.value === 'object' ? '"object"' : String(e.value);
  switch (e.reason) {
    case 'FieldValueRequired': return `${e.field}: Required value${e.message ? `: ${e.message}` : ''}`;
    case 'FieldValueForbidden': return `${e.field}: Forbidden${e.message ? `: ${e.message}` : ''}`;
    case 'FieldValueNotSupported': return `${e.field}: Unsupported value: ${v}${e.message ? `: ${e.message}` : ''}`;
    case 'FieldValueDuplicate': return `${e.field}: Duplicate value: ${v}`;
    default: return `${e.field}: Invalid value: ${v}${e.message ? `: ${e.message}` : ''}`;
  }
}

// ---------------------------------------------------------------------------------------------
// structural (schema) errors

function structuralErrors(type: ResourceType, obj: KubeObject): FieldError[] {
  const schema = schemasByKind[type.kind];
  if (!schema || !type.group.endsWith('cert-manager.io')) return [];
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of Value.Errors(schema, obj)) {
    const field = pointerToFieldPath(e.path, obj);
    // TypeBox reports a missing required property twice (missing, then wrong type): keep the first.
    if (seen.has(field)) continue;
    seen.add(field);
    out.push(schemaError(field, e));
  }
  return out;
}

function schemaError(field: string, e: ValueError): FieldError {
  const s = e.schema as unknown as Record<string | symbol, unknown>;
  // A key present with an undefined value never survives JSON; treat it as the missing field it is.
  if (e.type === ValueErrorType.ObjectRequiredProperty || e.value === undefined) return { field, message: '', reason: 'FieldValueRequired' };
  if (s[Kind] === 'StringEnum') {
    return { field, message: `supported values: ${(s.enum as string[]).map((x) => JSON.stringify(x)).join(', ')}`, reason: 'FieldValueNotSupported', value: e.value };
  }
  const invalid = (message: string): FieldError => ({ field, message, reason: 'FieldValueInvalid', value: e.value });
  switch (e.type) {
    case ValueErrorType.StringFormat:
      return invalid(s.format === 'date-time' ? 'must be an RFC 3339 date-time' : s.format === 'byte' ? 'must be base64-encoded' : `must be in ${String(s.format)} format`);
    case ValueErrorType.StringMaxLength: return invalid(`must be no more than ${String(s.maxLength)} characters`);
    case ValueErrorType.Kind:
      if (s[Kind] === 'StringOrStringArray') return invalid('must be a string or a list of strings');
      return invalid('must be of type object');
    default:
      return invalid(typeof s.type === 'string' ? `must be of type ${s.type}` : e.message);
  }
}

/** `/spec/dnsNames/0` → `spec.dnsNames[0]`; map keys that are not plain identifiers become `[key]`. */
function pointerToFieldPath(pointer: string, root: unknown): string {
  let out = '';
  let cur: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) out = index(out, Number(seg));
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(seg)) out = child(out, seg);
    else out = mapKey(out, seg);
    cur = isObj(cur) || Array.isArray(cur) ? (cur as Record<string, unknown>)[seg] : undefined;
  }
  return out;
}

function isUnder(path: string, ancestor: string): boolean {
  return path.startsWith(ancestor) && (path[ancestor.length] === '.' || path[ancestor.length] === '[');
}

/**
 * One error per mistake: a webhook rule's message wins over the schema's at the same path (and
 * over a schema "required" on a parent), and rules under a field the schema already rejected as
 * mistyped are dropped.
 */
function mergeErrors(schema: FieldError[], rules: FieldError[]): FieldError[] {
  const keptSchema = schema.filter((s) => !rules.some((r) => r.field === s.field || (s.reason === 'FieldValueRequired' && isUnder(r.field, s.field))));
  const keptRules = rules.filter((r) => !schema.some((s) => s.reason !== 'FieldValueRequired' && isUnder(r.field, s.field)));
  return [...keptSchema, ...keptRules];
}

function walkUnknown(schema: TSchema | undefined, value: unknown, path: string, out: string[]): void {
  if (!schema) return;
  const s = schema as unknown as Record<string | symbol, unknown>;
  if (s[Kind] === 'OpenObject' || s[Kind] === 'StringOrStringArray') return;
  if (s.type === 'array' && Array.isArray(value)) {
    value.forEach((v, i) => walkUnknown(s.items as TSchema, v, index(path, i), out));
    return;
  }
  if (s.type !== 'object' || !isObj(value)) return;
  if (s.patternProperties) {
    const item = Object.values(s.patternProperties as Record<string, TSchema>)[0];
    for (const [k, v] of Object.entries(value)) walkUnknown(item, v, mapKey(path, k), out);
    return;
  }
  const props = (s.properties ?? {}) as Record<string, TSchema>;
  const open = s['x-kubernetes-preserve-unknown-fields'] === true;
  for (const [k, v] of Object.entries(value)) {
    if (k in props) walkUnknown(props[k], v, child(path, k), out);
    else if (!open) out.push(child(path, k));
  }
}

const objectMetaFields = new Set([
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields',
]);

function extraTopLevelFields(type: ResourceType): Record<string, true> {
  if (type.kind === 'Secret') return { data: true, stringData: true, type: true, immutable: true };
  if (type.kind === 'Event') {
    return Object.fromEntries(['involvedObject', 'reason', 'message', 'source', 'firstTimestamp', 'lastTimestamp', 'count', 'type', 'eventTime',
      'series', 'action', 'related', 'reportingComponent', 'reportingInstance'].map((k) => [k, true]));
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// well-formed Unicode

function wellFormedError(s: string): string {
  const c = loneSurrogate(s)!.toString(16).toUpperCase();
  return `must be well-formed Unicode: contains a lone UTF-16 surrogate (U+${c}), which no certificate can encode`;
}

/** A map key as it may appear in a field path: lone surrogates spelled as \uXXXX, so the message stays well-formed. */
function pathKey(k: string): string {
  return k.replace(/\p{Cs}/gu, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

function validateWellFormed(v: unknown, path: string, errs: Errors): void {
  // Iterative: an object deep enough to overflow the stack must not crash admission.
  const stack: [unknown, string][] = [[v, path]];
  while (stack.length > 0) {
    const [value, p] = stack.pop()!;
    if (isStr(value)) {
      if (!isWellFormed(value)) errs.invalid(p, value, wellFormedError(value));
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], index(p, i)]);
    } else if (isObj(value)) {
      for (const [k, x] of Object.entries(value).reverse()) {
        const kp = /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? child(p, k) : mapKey(p, pathKey(k));
        if (!isWellFormed(k)) errs.invalid(kp, pathKey(k), `key ${wellFormedError(k)}`);
        stack.push([x, kp]);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// names, labels, annotations

function validateLabels(labels: unknown, path: string, errs: Errors): void {
  if (!isObj(labels)) return;
  for (const [k, v] of Object.entries(labels)) {
    const ke = qualifiedNameError(k);
    if (ke) errs.invalid(path, k, ke);
    const ve = isStr(v) ? labelValueError(v) : undefined;
    if (ve) errs.invalid(mapKey(path, k), v, ve);
  }
}

function validateAnnotationKeys(annotations: unknown, path: string, errs: Errors): void {
  if (!isObj(annotations)) return;
  for (const k of Object.keys(annotations)) {
    const ke = qualifiedNameError(k.toLowerCase());
    if (ke) errs.invalid(path, k, ke);
  }
}

function validateMetadata(type: ResourceType, obj: KubeObject, errs: Errors): void {
  const md = obj.metadata;
  if (!isObj(md)) {
    errs.required('metadata');
    return;
  }
  if (isStr(md.name) && md.name !== '') {
    const e = type.kind === 'Namespace' ? dns1123LabelError(md.name) : dns1123SubdomainError(md.name);
    if (e) errs.invalid('metadata.name', md.name, e);
  } else if (!isStr(md.generateName) || md.generateName === '') {
    errs.required('metadata.name', 'name or generateName is required');
  }
  validateLabels(md.labels, 'metadata.labels', errs);
  validateAnnotationKeys(md.annotations, 'metadata.annotations', errs);
}

// ---------------------------------------------------------------------------------------------
// Certificate

function validateIssuerRef(ref: unknown, path: string, errs: Errors): void {
  if (!isObj(ref)) {
    errs.required(child(path, 'name'), 'must be specified');
    return;
  }
  if (!isStr(ref.name) || ref.name === '') errs.required(child(path, 'name'), 'must be specified');
  const group = isStr(ref.group) ? ref.group : '';
  const kind = isStr(ref.kind) ? ref.kind : '';
  if ((group === '' || group === 'cert-manager.io') && !['', 'Issuer', 'ClusterIssuer'].includes(kind)) {
    errs.invalid(child(path, 'kind'), kind, 'must be one of Issuer or ClusterIssuer' + (group === '' ? ' (did you forget to set spec.issuerRef.group?)' : ''));
  }
}

// RFC 5322 dot-atom on both sides of the @: what Go's mail.ParseAddress accepts for a bare
// address (quoted local parts aside), in the ASCII an rfc822Name (IA5String) can carry.
const atom = "[A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~]+";
const emailRe = new RegExp(`^${atom}(\\.${atom})*@${atom}(\\.${atom})*$`);
// eslint-disable-next-line no-control-regex
const controlRe = /[\x00-\x1f\x7f]/;
// eslint-disable-next-line no-control-regex
const nonASCIIRe = /[^\x00-\x7f]/;

/** Why e is not a bare email address a certificate can carry, or undefined. */
export function emailError(e: string): string | undefined {
  if (emailRe.test(e)) return undefined;
  if (/[<>]/.test(e) || /\s/.test(e.trim())) return 'invalid email address: make sure the supplied value only contains the email address itself';
  if (controlRe.test(e)) return 'invalid email address: must not contain control characters';
  if (nonASCIIRe.test(e)) return 'invalid email address: must be ASCII (an rfc822Name SAN is an IA5String)';
  if (!e.includes('@')) return 'invalid email address: mail: missing @ in addr-spec';
  return 'invalid email address: mail: the local part and the domain must be dot-atoms (letters, digits and !#$%&\'*+-/=?^_`{|}~, separated by single dots)';
}

function validateEmails(v: unknown, path: string, errs: Errors): void {
  strings(v).forEach((e, i) => {
    if (!isWellFormed(e)) return; // reported once, by validateWellFormed
    const err = emailError(e);
    if (err) errs.invalid(index(path, i), e, err);
  });
}

// Looser than a Kubernetes name on purpose: cert-manager accepts any dnsNames, and manifests with
// upper-case names (DNS is case-insensitive) or underscores (private PKI, SRV-style names) must keep
// applying; what is refused is what no host name can hold (whitespace, control and shell characters).
const dnsNameRe = /^[A-Za-z0-9_]([-A-Za-z0-9_]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([-A-Za-z0-9_]*[A-Za-z0-9_])?)*$/;
const dnsNameMsg = "a DNS name must consist of dot-separated labels of letters, digits, '-' or '_', each starting and ending with a letter, digit or '_' (e.g. 'www.example.com'; non-ASCII names in their xn-- form)";
const wildcardMsg = "a wildcard '*' is only allowed as the whole leftmost label, as in '*.example.com'";

/**
 * Why d cannot be a dNSName SAN, or undefined: a host name of letters, digits, '-' and '_',
 * optionally with a `*.` wildcard as its leftmost label. Upstream's
 * webhook does not check dnsNames at all; without this, a newline or `$()` was signed into
 * certificates and handed to deploy hooks in RENEWED_DOMAINS (issue 12, finding 7).
 */
export function dnsNameError(d: string): string | undefined {
  if (d === '') return 'must not be empty';
  const base = d.startsWith('*.') ? d.slice(2) : d;
  if (base.includes('*')) return wildcardMsg;
  if (d.length > 253) return 'must be no more than 253 characters';
  if (!dnsNameRe.test(base)) return dnsNameMsg;
  if (base.split('.').some((l) => l.length > 63)) return 'each label must be no more than 63 characters';
  return undefined;
}

function validateDNSNames(v: unknown, path: string, errs: Errors): void {
  strings(v).forEach((d, i) => {
    if (!isWellFormed(d)) return;
    const e = dnsNameError(d);
    if (e) errs.invalid(index(path, i), d, e);
  });
}

/** Why ip is not an address Go's net.ParseIP accepts (no zone, no surrounding space), or undefined. */
export function ipAddressError(ip: string): string | undefined {
  return isIP(ip) === 0 || ip.includes('%') ? 'invalid IP address' : undefined;
}

/**
 * Why u cannot be a uniformResourceIdentifier SAN, or undefined. URL parsing alone is not enough:
 * WHATWG parsers drop tabs and newlines and trim control characters, so "https://a\nb" parses;
 * Go's url.Parse refuses control characters, and an IA5String carries ASCII only.
 */
export function uriError(u: string): string | undefined {
  if (controlRe.test(u) || /\s/.test(u)) return 'invalid URI: must not contain whitespace or control characters';
  if (nonASCIIRe.test(u)) return 'invalid URI: must be ASCII (percent-encode other characters)';
  return URL.canParse(u) ? undefined : 'invalid URI';
}

function validateIPs(v: unknown, path: string, errs: Errors): void {
  strings(v).forEach((ip, i) => {
    if (!isWellFormed(ip)) return;
    const e = ipAddressError(ip);
    if (e) errs.invalid(index(path, i), ip, e);
  });
}

function validateURIs(v: unknown, path: string, errs: Errors): void {
  strings(v).forEach((u, i) => {
    if (!isWellFormed(u)) return;
    const e = uriError(u);
    if (e) errs.invalid(index(path, i), u, e);
  });
}

function parseCIDR(s: string): boolean {
  const m = /^(.+)\/(\d{1,3})$/.exec(s);
  if (!m) return false;
  const fam = isIP(m[1]);
  const bits = Number(m[2]);
  return (fam === 4 && bits <= 32) || (fam === 6 && bits <= 128);
}

function tryDuration(v: unknown, path: string, errs: Errors): number | undefined {
  if (!isStr(v)) return undefined;
  try {
    return parseDuration(v);
  } catch (err) {
    errs.invalid(path, v, (err as Error).message);
    return undefined;
  }
}

const commonNameOID = '2.5.4.3';

function validateCertificateSpec(spec: Obj, p: string, errs: Errors): void {
  // 1. secretName
  if (!isStr(spec.secretName) || spec.secretName === '') errs.required(child(p, 'secretName'), 'must be specified');
  else {
    const e = dns1123SubdomainError(spec.secretName);
    if (e) errs.invalid(child(p, 'secretName'), spec.secretName, e);
  }
  // 2. issuerRef
  validateIssuerRef(spec.issuerRef, child(p, 'issuerRef'), errs);

  // 3. literalSubject: parsed by the parser the CSR builder uses, so what is admitted can be encoded
  let commonName = isStr(spec.commonName) ? spec.commonName : '';
  if (isStr(spec.literalSubject) && spec.literalSubject !== '') {
    const lp = child(p, 'literalSubject');
    if (commonName !== '') errs.invalid(child(p, 'commonName'), commonName, 'When providing a `LiteralSubject` no `commonName` may be provided.');
    if (isObj(spec.subject) && Object.values(spec.subject).some((v) => (Array.isArray(v) ? v.length > 0 : v !== undefined && v !== ''))) {
      errs.invalid(child(p, 'subject'), spec.subject, 'When providing a `LiteralSubject` no `Subject` properties may be provided.');
    }
    // A lone surrogate is reported once, by validateWellFormed.
    if (isWellFormed(spec.literalSubject)) {
      try {
        const cn = parseLiteralSubject(spec.literalSubject).flat().find((a) => a.type === commonNameOID)?.value;
        commonName = typeof cn === 'string' ? cn : cn ? `#${cn.toString('hex')}` : '';
      } catch (err) {
        errs.invalid(lp, spec.literalSubject, (err as Error).message);
      }
    }
  }

  // 4. at least one identity
  const nonEmpty = (k: string) => Array.isArray(spec[k]) && (spec[k] as unknown[]).length > 0;
  if (commonName === '' && !['dnsNames', 'uris', 'emailAddresses', 'ipAddresses', 'otherNames'].some(nonEmpty)) {
    errs.invalid(p, '', 'at least one of commonName (from the commonName field or from a literalSubject), dnsNames, emailSANs, ipAddresses, otherNames, or uriSANs must be set');
  }
  // 5. commonName length
  if (commonName.length > 64) {
    errs.invalid(child(p, isStr(spec.literalSubject) && spec.literalSubject ? 'literalSubject' : 'commonName'), commonName, 'must be no more than 64 characters');
  }
  // 6. IPs, 7. emails; then dnsNames and URIs, which upstream does not check (issue 12, finding 7)
  validateIPs(spec.ipAddresses, child(p, 'ipAddresses'), errs);
  validateEmails(spec.emailAddresses, child(p, 'emailAddresses'), errs);
  validateDNSNames(spec.dnsNames, child(p, 'dnsNames'), errs);
  validateURIs(spec.uris, child(p, 'uris'), errs);
  // 8. otherNames
  if (Array.isArray(spec.otherNames)) {
    spec.otherNames.forEach((on, i) => {
      if (!isObj(on)) return;
      const op = index(child(p, 'otherNames'), i);
      if (!isStr(on.oid) || on.oid === '') errs.required(child(op, 'oid'), 'must be specified');
      else if (!/^[0-2](\.(0|[1-9]\d*))+$/.test(on.oid)) errs.invalid(child(op, 'oid'), on.oid, 'invalid oid syntax');
      if (!isStr(on.utf8Value) || on.utf8Value === '') errs.required(child(op, 'utf8Value'), 'must be set to a valid non-empty UTF8 string');
    });
  }

  // 9. private key, 10. signature algorithm
  const pk = isObj(spec.privateKey) ? spec.privateKey : {};
  const alg = isStr(pk.algorithm) && pk.algorithm !== '' ? pk.algorithm : 'RSA';
  const sizePath = child(child(p, 'privateKey'), 'size');
  if (isNum(pk.size) && pk.size !== 0) {
    if (alg === 'RSA' && (pk.size < 2048 || pk.size > 8192)) errs.invalid(sizePath, pk.size, 'must be between 2048 & 8192 for rsa keyAlgorithm');
    if (alg === 'ECDSA' && ![256, 384, 521].includes(pk.size)) errs.notSupported(sizePath, pk.size, ['256', '384', '521']);
  }
  if (isStr(spec.signatureAlgorithm) && (signatureAlgorithms as readonly string[]).includes(spec.signatureAlgorithm)) {
    const allowed: Record<string, string[]> = {
      RSA: ['SHA256WithRSA', 'SHA384WithRSA', 'SHA512WithRSA'],
      ECDSA: ['ECDSAWithSHA256', 'ECDSAWithSHA384', 'ECDSAWithSHA512'],
      Ed25519: ['PureEd25519'],
    };
    if (allowed[alg] && !allowed[alg].includes(spec.signatureAlgorithm)) errs.notSupported(child(p, 'signatureAlgorithm'), spec.signatureAlgorithm, allowed[alg]);
  }

  // 11. duration / renewBefore / renewBeforePercentage
  validateCertificateDurations(spec, p, errs);

  // 13. revisionHistoryLimit
  if (isNum(spec.revisionHistoryLimit) && spec.revisionHistoryLimit < 1) errs.invalid(child(p, 'revisionHistoryLimit'), spec.revisionHistoryLimit, 'must not be less than 1');

  // 14. secretTemplate
  if (isObj(spec.secretTemplate)) {
    const tp = child(p, 'secretTemplate');
    validateLabels(spec.secretTemplate.labels, child(tp, 'labels'), errs);
    validateAnnotationKeys(spec.secretTemplate.annotations, child(tp, 'annotations'), errs);
    if (isObj(spec.secretTemplate.annotations)) {
      for (const k of Object.keys(spec.secretTemplate.annotations)) {
        if (k.startsWith(CERT_MANAGER_PREFIX) && k !== CAInjectorAnnotation.allowDirectInjection) {
          errs.invalid(mapKey(child(tp, 'annotations'), k), k, 'cert-manager.io/* annotations are not allowed');
        }
      }
    }
  }

  // 15. nameConstraints
  if (isObj(spec.nameConstraints)) {
    const np = child(p, 'nameConstraints');
    if (spec.isCA !== true) errs.invalid(np, spec.nameConstraints, 'isCa should be true when nameConstraints is set');
    if (!isObj(spec.nameConstraints.permitted) && !isObj(spec.nameConstraints.excluded)) errs.invalid(np, spec.nameConstraints, 'either permitted or excluded must be set');
    for (const side of ['permitted', 'excluded'] as const) {
      const item = spec.nameConstraints[side];
      if (!isObj(item)) continue;
      strings(item.ipRanges).forEach((r, i) => { if (!parseCIDR(r)) errs.invalid(index(child(child(np, side), 'ipRanges'), i), r, 'invalid CIDR address'); });
      validateEmails(item.emailAddresses, child(child(np, side), 'emailAddresses'), errs);
    }
  }

  // 16. additionalOutputFormats
  if (Array.isArray(spec.additionalOutputFormats)) {
    const seen = new Set<string>();
    spec.additionalOutputFormats.forEach((f, i) => {
      if (!isObj(f) || !isStr(f.type)) return;
      if (seen.has(f.type)) errs.duplicate(child(index(child(p, 'additionalOutputFormats'), i), 'type'), f.type);
      seen.add(f.type);
    });
  }

  // 17. keystores
  if (isObj(spec.keystores)) {
    for (const [k, label] of [['jks', 'JKS'], ['pkcs12', 'PKCS#12']] as const) {
      const ks = spec.keystores[k];
      if (!isObj(ks)) continue;
      const kp = child(child(p, 'keystores'), k);
      const hasRef = isObj(ks.passwordSecretRef) && isStr(ks.passwordSecretRef.name) && ks.passwordSecretRef.name !== '';
      const hasPw = ks.password !== undefined;
      if (hasRef && hasPw) errs.forbidden(kp, `exactly one of passwordSecretRef and password must be provided for ${label} keystores; cannot set both`);
      else if (!hasRef && !hasPw) errs.required(kp, `must set exactly one of passwordSecretRef and password for ${label} keystores`);
      else if (hasPw && ks.password === '') errs.invalid(child(kp, 'password'), '', `literal password cannot be empty if set on ${label} keystores`);
    }
  }

  // 18. renewal
  if (isObj(spec.renewal)) validateRenewal(spec.renewal, child(p, 'renewal'), errs);
}

function validateCertificateDurations(spec: Obj, p: string, errs: Errors): void {
  const dp = child(p, 'duration');
  const rp = child(p, 'renewBefore');
  const pp = child(p, 'renewBeforePercentage');
  const parsedDuration = tryDuration(spec.duration, dp, errs);
  const renewBefore = tryDuration(spec.renewBefore, rp, errs);
  const duration = parsedDuration ?? defaultCertificateDurationMs;
  if (parsedDuration !== undefined && parsedDuration < minimumCertificateDurationMs) {
    errs.invalid(dp, spec.duration, `certificate duration must be greater than ${formatDuration(minimumCertificateDurationMs)}`);
  }
  const pct = spec.renewBeforePercentage;
  if (spec.renewBefore !== undefined && pct !== undefined) {
    const msg = 'renewBefore and renewBeforePercentage are mutually exclusive and cannot both be set';
    errs.invalid(rp, spec.renewBefore, msg);
    errs.invalid(pp, pct, msg);
    return;
  }
  if (renewBefore !== undefined) {
    if (renewBefore < minimumRenewBeforeMs) errs.invalid(rp, spec.renewBefore, `certificate renewBefore must be greater than ${formatDuration(minimumRenewBeforeMs)}`);
    else if (renewBefore >= duration) errs.invalid(rp, spec.renewBefore, `certificate duration ${formatDuration(duration)} must be greater than renewBefore ${formatDuration(renewBefore)}`);
  }
  // Upstream checks the complement percentage and skips the check when duration and renewBefore
  // are unset (reference §9.5); the rule here is the one the controllers actually rely on.
  if (isNum(pct)) {
    if (pct <= 0 || pct >= 100) errs.invalid(pp, pct, 'must be greater than 0 and less than 100');
    else if ((duration * pct) / 100 < minimumRenewBeforeMs) {
      errs.invalid(pp, pct, `certificate renewBeforePercentage must result in a renewBefore greater than ${formatDuration(minimumRenewBeforeMs)}`);
    }
  }
}

const cronHint = 'cron needs to follow: minute hour day-of-month month day-of-week';

/** The runtime parser's problem as the webhook words it; problems of shape are the schema's to report. */
function windowFieldError(p: WindowProblem, errs: Errors): void {
  switch (p.code) {
    case 'notList': case 'notObject': case 'wrongType': case 'cronRequired': return;
    case 'unknownTimeZone': return errs.invalid(p.field, p.value, 'invalid value for timezone. timezone must be IANA compliant');
    case 'durationRequired': return errs.required(p.field, 'duration (or windowDuration) must be specified and greater than 0');
    case 'durationInvalid': return errs.invalid(p.field, p.value, p.detail ?? p.message);
    case 'durationNotPositive': return errs.invalid(p.field, p.value, 'must be greater than 0');
    case 'cronEmptyList': return errs.required(p.field, 'at least one cron expression is required');
    case 'cronEmpty': return errs.invalid(p.field, p.value, 'must not be empty');
    case 'cronDescriptor': return errs.invalid(p.field, p.value, `invalid cron syntax: unrecognized descriptor ${JSON.stringify(String(p.value).trim())}. ${cronHint}`);
    case 'cronFields': return errs.invalid(p.field, p.value, `invalid cron syntax: expected exactly 5 fields, found ${p.fieldCount}: ${JSON.stringify(String(p.value).trim())}. ${cronHint}`);
    case 'cronSyntax': return errs.invalid(p.field, p.value, `invalid cron syntax: ${p.detail}. ${cronHint}`);
  }
}

function validateRenewal(renewal: Obj, p: string, errs: Errors): void {
  const windows = Array.isArray(renewal.windows) ? renewal.windows : [];
  if (renewal.policy === 'Disabled' && windows.length > 0) {
    errs.forbidden(child(p, 'windows'), 'windows cannot be set when `renewal.policy` is set to Disabled');
    return;
  }
  // An admission-only rule: the controller reads the seed spelling when both are given, so two
  // spellings that disagree are refused here rather than one of them silently ignored.
  windows.forEach((w, i) => {
    if (!isObj(w)) return;
    const wp = index(child(p, 'windows'), i);
    if (w.duration !== undefined && w.windowDuration !== undefined && w.duration !== w.windowDuration) {
      errs.invalid(child(wp, 'windowDuration'), w.windowDuration, 'duration and windowDuration are two spellings of one field and must agree');
    }
    if (w.timeZone !== undefined && w.timezone !== undefined && w.timeZone !== w.timezone) {
      errs.invalid(child(wp, 'timezone'), w.timezone, 'timeZone and timezone are two spellings of one field and must agree');
    }
  });
  for (const problem of checkRenewalWindows(renewal.windows, child(p, 'windows')).problems) windowFieldError(problem, errs);
}

// ---------------------------------------------------------------------------------------------
// CertificateRequest

/**
 * The CSR is read by the parser the signers use (pki/csr.ts: structure and signature), and the
 * names it carries are held to the Certificate's rules, since the issuer signs them (issue 12,
 * finding 7): the first bad name, as `encoded CSR error: dnsNames[1]: Invalid value: ...`.
 */
function csrError(request: string): string | undefined {
  const pem = Buffer.from(request, 'base64').toString('latin1');
  if (!/-----BEGIN (NEW )?CERTIFICATE REQUEST-----[\s\S]*?-----END (NEW )?CERTIFICATE REQUEST-----/.test(pem)) {
    return 'encoded CSR error: failed to decode PEM block containing certificate request';
  }
  let t;
  try {
    t = parseCSR(pem).template;
  } catch (err) {
    return `encoded CSR error: ${(err as Error).message}`;
  }
  const checks: [string, string[] | undefined, (v: string) => string | undefined][] = [
    ['dnsNames', t.dnsNames, dnsNameError],
    ['ipAddresses', t.ipAddresses, ipAddressError],
    ['emailAddresses', t.emailAddresses, emailError],
    ['uris', t.uris, uriError],
  ];
  for (const [field, values, check] of checks) {
    for (const [i, v] of (values ?? []).entries()) {
      const e = check(v);
      if (e) return `encoded CSR error: ${field}[${i}]: Invalid value: ${JSON.stringify(v)}: ${e}`;
    }
  }
  return undefined;
}

function conditionsOf(o: KubeObject | undefined): Obj[] {
  const st = o && isObj(o.status) ? o.status : undefined;
  return st && Array.isArray(st.conditions) ? st.conditions.filter(isObj) : [];
}

function validateCertificateRequest(obj: KubeObject, old: KubeObject | undefined, errs: Errors): void {
  const spec = isObj(obj.spec) ? obj.spec : undefined;
  if (spec) {
    validateIssuerRef(spec.issuerRef, 'spec.issuerRef', errs);
    if (!old && isStr(spec.request) && spec.request !== '') {
      const e = csrError(spec.request);
      if (e) errs.invalid('spec.request', '<csr>', e);
    }
    tryDuration(spec.duration, 'spec.duration', errs);
  }

  const conds = conditionsOf(obj);
  const cp = 'status.conditions';
  for (const t of ['Approved', 'Denied']) {
    const matching = conds.filter((c) => c.type === t);
    if (matching.length > 1) errs.forbidden(cp, `multiple ${JSON.stringify(t)} conditions present`);
    if (matching.length > 0 && matching[0].status !== 'True') errs.invalid(cp, matching[0].status, `${JSON.stringify(t)} condition may only be set to True`);
  }
  if (conds.some((c) => c.type === 'Approved') && conds.some((c) => c.type === 'Denied')) {
    errs.forbidden(cp, "both 'Denied' and 'Approved' conditions cannot coexist");
  }

  if (!old) return;
  const oldSpec = isObj(old.spec) ? old.spec : undefined;
  if (!isDeepStrictEqual(spec, oldSpec)) errs.forbidden('spec', 'cannot change spec after creation');
  for (const t of ['Approved', 'Denied']) {
    const before = conditionsOf(old).find((c) => c.type === t);
    const after = conds.find((c) => c.type === t);
    if (before && (!after || after.status !== before.status || after.reason !== before.reason || after.message !== before.message)) {
      errs.forbidden(cp, `'${t}' condition may not be modified once set`);
    }
  }
  const a0 = (old.metadata?.annotations ?? {}) as Record<string, string>;
  const a1 = (obj.metadata?.annotations ?? {}) as Record<string, string>;
  for (const k of new Set([...Object.keys(a0), ...Object.keys(a1)])) {
    if (isCertManagerKey(k) && a0[k] !== a1[k]) errs.forbidden(mapKey('metadata.annotations', k), 'cannot change cert-manager annotation after creation');
  }
}

// ---------------------------------------------------------------------------------------------
// Issuer / ClusterIssuer

function present(o: Obj, k: string): boolean {
  return o[k] !== undefined && o[k] !== null;
}

function validateIssuerSpec(spec: Obj, p: string, errs: Errors): void {
  const configured = issuerTypes.filter((t) => present(spec, t));
  if (configured.length === 0) errs.required(p, 'at least one issuer must be configured');
  for (const extra of configured.slice(1)) errs.forbidden(child(p, extra), 'may not specify more than one issuer type');

  if (isObj(spec.ca) && (!isStr(spec.ca.secretName) || spec.ca.secretName === '')) errs.required(child(child(p, 'ca'), 'secretName'), 'must be specified');
  if (isObj(spec.acme)) validateACMEIssuer(spec.acme, child(p, 'acme'), errs);
  if (isObj(spec.vault) && isObj(spec.vault.auth)) {
    const auth = spec.vault.auth;
    const n = ['tokenSecretRef', 'appRole', 'kubernetes', 'clientCertificate'].filter((k) => present(auth, k)).length;
    if (n !== 1) errs.invalid(child(child(p, 'vault'), 'auth'), auth, 'please supply exactly one of: appRole, kubernetes, tokenSecretRef, clientCertificate');
  }
  if (isObj(spec.venafi)) {
    const venafi = spec.venafi;
    const n = ['tpp', 'cloud'].filter((k) => present(venafi, k)).length;
    if (n !== 1) errs.invalid(child(p, 'venafi'), spec.venafi, 'please supply exactly one of: tpp, cloud');
  }
}

function validateACMEIssuer(acme: Obj, p: string, errs: Errors): void {
  if (!isStr(acme.server) || acme.server === '') errs.required(child(p, 'server'), 'acme server URL is a required field');
  else if (!/^https?:\/\//.test(acme.server) || !URL.canParse(acme.server)) errs.invalid(child(p, 'server'), acme.server, 'must be an http or https URL');
  const pk = acme.privateKeySecretRef;
  if (!isObj(pk) || !isStr(pk.name) || pk.name === '') errs.required(child(child(p, 'privateKeySecretRef'), 'name'), 'private key secret name is a required field');
  if (isStr(acme.caBundle) && acme.caBundle !== '') {
    if (acme.skipTLSVerify === true) errs.invalid(child(p, 'caBundle'), '<bundle>', 'caBundle and skipTLSVerify are mutually exclusive and cannot both be set');
    else if (base64Re.test(acme.caBundle) && !Buffer.from(acme.caBundle, 'base64').toString('latin1').includes('-----BEGIN CERTIFICATE-----')) {
      errs.invalid(child(p, 'caBundle'), '<bundle>', 'cert bundle didn\'t contain any valid certificates');
    }
  }
  if (isObj(acme.externalAccountBinding)) {
    const ep = child(p, 'externalAccountBinding');
    const eab = acme.externalAccountBinding;
    if (!isStr(eab.keyID) || eab.keyID === '') errs.required(child(ep, 'keyID'), 'the keyID field is required when using externalAccountBinding');
    if (!isObj(eab.keySecretRef) || !isStr(eab.keySecretRef.name) || eab.keySecretRef.name === '') {
      errs.required(child(child(ep, 'keySecretRef'), 'name'), 'the keySecretRef.name field is required when using externalAccountBinding');
    }
  }
  if (Array.isArray(acme.solvers)) {
    acme.solvers.forEach((s, i) => { if (isObj(s)) validateSolver(s, index(child(p, 'solvers'), i), errs); });
  }
}

const serviceTypes = ['ClusterIP', 'NodePort'];
const base64Re = /^[A-Za-z0-9+/]*={0,2}$/;

function validateSolver(s: Obj, p: string, errs: Errors): void {
  const types = ['http01', 'dns01'].filter((k) => present(s, k));
  if (types.length === 0) errs.required(p, 'no solver type configured');
  if (types.length > 1) errs.forbidden(child(p, 'dns01'), 'may not specify more than one solver type in a single solver');
  if (isStr(s.waitInsteadOfSelfCheck)) {
    const ms = tryDuration(s.waitInsteadOfSelfCheck, child(p, 'waitInsteadOfSelfCheck'), errs);
    if (ms !== undefined && ms < 0) errs.invalid(child(p, 'waitInsteadOfSelfCheck'), s.waitInsteadOfSelfCheck, 'must not be negative');
  }

  if (isObj(s.http01)) {
    const hp = child(p, 'http01');
    const kinds = ['ingress', 'gatewayHTTPRoute'].filter((k) => present(s.http01 as Obj, k));
    if (kinds.length === 0) errs.required(hp, 'no HTTP01 solver type configured');
    if (kinds.length > 1) errs.forbidden(child(hp, 'gatewayHTTPRoute'), "only one of 'ingress' or 'gatewayHTTPRoute' may be specified");
    for (const k of kinds) {
      const cfg = (s.http01 as Obj)[k];
      if (!isObj(cfg)) continue;
      if (isStr(cfg.serviceType) && cfg.serviceType !== '' && !serviceTypes.includes(cfg.serviceType)) errs.notSupported(child(child(hp, k), 'serviceType'), cfg.serviceType, serviceTypes);
      if (k === 'ingress' && ['class', 'ingressClassName', 'name'].filter((f) => isStr(cfg[f]) && cfg[f] !== '').length > 1) {
        errs.invalid(child(hp, 'ingress'), cfg, "only one of 'ingressClassName', 'name' or 'class' should be specified");
      }
    }
  }

  if (isObj(s.dns01)) {
    const dp = child(p, 'dns01');
    const providers = dns01Providers.filter((k) => present(s.dns01 as Obj, k));
    if (providers.length === 0) errs.required(dp, 'no DNS01 provider configured');
    for (const extra of providers.slice(1)) errs.forbidden(child(dp, extra), 'may not specify more than one provider type');
    if (isObj(s.dns01.rfc2136)) validateRFC2136(s.dns01.rfc2136, child(dp, 'rfc2136'), errs);
  }
}

function validateRFC2136(r: Obj, p: string, errs: Errors): void {
  if (!isStr(r.nameserver) || r.nameserver === '') errs.required(child(p, 'nameserver'));
  else if (!validNameserver(r.nameserver)) {
    errs.invalid(child(p, 'nameserver'), r.nameserver, 'nameserver must be set in the form host:port where host is an IPv4 address, an enclosed IPv6 address or a hostname');
  }
  if (isStr(r.tsigAlgorithm) && r.tsigAlgorithm !== '' && !(tsigAlgorithms as readonly string[]).includes(r.tsigAlgorithm.toUpperCase())) {
    errs.notSupported(child(p, 'tsigAlgorithm'), r.tsigAlgorithm, tsigAlgorithms);
  }
  if (isStr(r.tsigKeyName) && r.tsigKeyName !== '') {
    const ref = r.tsigSecretSecretRef;
    if (!isObj(ref) || !isStr(ref.name) || ref.name === '') errs.required(child(child(p, 'tsigSecretSecretRef'), 'name'), 'required when tsigKeyName is set');
  }
}

function validNameserver(ns: string): boolean {
  const hostname = /^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*\.?$/;
  const port = (s: string) => /^\d{1,5}$/.test(s) && Number(s) > 0 && Number(s) < 65536;
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(ns);
  if (bracketed) return isIP(bracketed[1]) === 6 && (bracketed[2] === undefined || port(bracketed[2]));
  if (isIP(ns) !== 0) return true;
  const i = ns.lastIndexOf(':');
  if (i < 0) return hostname.test(ns);
  const host = ns.slice(0, i);
  return port(ns.slice(i + 1)) && (isIP(host) === 4 || hostname.test(host));
}
