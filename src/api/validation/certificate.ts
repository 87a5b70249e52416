// Certificate: cert-manager's ValidateCertificateSpec (numbered as there), plus the renewal
// windows, read by the parser the renewal controller uses (src/api/renewal-windows.ts).
import { isIP } from 'node:net';
import { readLiteralSubject } from '../../pki/x509-fields.ts';
import { canonicalOID } from '../../pki/der.ts';
import { formatDuration } from '../duration.ts';
import { CAInjectorAnnotation, CERT_MANAGER_PREFIX } from '../annotations.ts';
import { defaultCertificateDurationMs, minimumCertificateDurationMs, minimumRenewBeforeMs } from '../defaults.ts';
import { checkRenewalWindows, type WindowProblem } from '../renewal-windows.ts';
import { signatureAlgorithms } from '../schema-values.ts';
import { dns1123SubdomainError } from '../names.ts';
import { isWellFormed } from '../unicode.ts';
import { child, index, isNum, isObj, isStr, mapKey, strings, tryDuration, type Errors, type Obj } from './field-errors.ts';
import { validateIssuerRef } from './issuer-ref.ts';
import { maxAnnotationBytes, validateAnnotationKeys, validateLabels } from './metadata.ts';
import { validateDNSNames, validateEmailConstraints, validateEmails, validateIPs, validateURIs } from './subject-alt-names.ts';

function parseCIDR(s: string): boolean {
  const m = /^(.+)\/(\d{1,3})$/.exec(s);
  if (!m) return false;
  const fam = isIP(m[1]);
  const bits = Number(m[2]);
  return (fam === 4 && bits <= 32) || (fam === 6 && bits <= 128);
}

const commonNameOID = '2.5.4.3';

/** Each concern in upstream's order (its step numbers are on the functions below), so errors are listed in the order cert-manager lists them. */
export function validateCertificateSpec(spec: Obj, p: string, errs: Errors): void {
  validateSecretName(spec.secretName, child(p, 'secretName'), errs);
  // 2. issuerRef
  validateIssuerRef(spec.issuerRef, child(p, 'issuerRef'), errs);
  validateSubject(spec, p, errs);
  validateSubjectAltNames(spec, p, errs);
  validatePrivateKey(spec, p, errs);
  validateCertificateDurations(spec, p, errs);
  // 13. revisionHistoryLimit
  if (isNum(spec.revisionHistoryLimit) && spec.revisionHistoryLimit < 1) errs.invalid(child(p, 'revisionHistoryLimit'), spec.revisionHistoryLimit, 'must not be less than 1');
  if (isObj(spec.secretTemplate)) validateSecretTemplate(spec.secretTemplate, child(p, 'secretTemplate'), errs);
  if (isObj(spec.nameConstraints)) validateNameConstraints(spec.nameConstraints, spec.isCA, child(p, 'nameConstraints'), errs);
  if (Array.isArray(spec.additionalOutputFormats)) validateAdditionalOutputFormats(spec.additionalOutputFormats, child(p, 'additionalOutputFormats'), errs);
  if (isObj(spec.keystores)) validateKeystores(spec.keystores, child(p, 'keystores'), errs);
  if (isObj(spec.renewal)) validateRenewal(spec.renewal, child(p, 'renewal'), errs);
}

/** 1. secretName */
function validateSecretName(secretName: unknown, sp: string, errs: Errors): void {
  if (!isStr(secretName) || secretName === '') errs.required(sp, 'must be specified');
  else {
    const e = dns1123SubdomainError(secretName);
    if (e) errs.invalid(sp, secretName, e);
  }
}

/** 3. literalSubject, 4. at least one identity, 5. commonName length */
function validateSubject(spec: Obj, p: string, errs: Errors): void {
  const commonName = effectiveCommonName(spec, p, errs);
  const nonEmpty = (k: string) => Array.isArray(spec[k]) && (spec[k] as unknown[]).length > 0;
  if (commonName === '' && !['dnsNames', 'uris', 'emailAddresses', 'ipAddresses', 'otherNames'].some(nonEmpty)) {
    errs.invalid(p, '', 'at least one of commonName (from the commonName field or from a literalSubject), dnsNames, emailSANs, ipAddresses, otherNames, or uriSANs must be set');
  }
  // Go's len(): bytes, as upstream counts them
  if (Buffer.byteLength(commonName) > 64) {
    errs.tooLong(child(p, 'commonName'), 64);
  }
}

/**
 * The commonName the certificate will carry: spec.commonName, or the one in literalSubject,
 * which is parsed by the parser the CSR builder uses, so what is admitted can be encoded.
 */
function effectiveCommonName(spec: Obj, p: string, errs: Errors): string {
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
        const { rdns, unrecognized } = readLiteralSubject(spec.literalSubject);
        commonName = rdns.flat().find((a) => a.type === commonNameOID)?.value ?? '';
        for (const message of unrecognized) errs.invalid(lp, spec.literalSubject, message);
      } catch (err) {
        errs.invalid(lp, spec.literalSubject, (err as Error).message);
      }
    }
  }
  return commonName;
}

/** 6. IPs, 7. emails; then dnsNames and URIs, which upstream does not check (issue 12, finding 7); 8. otherNames */
function validateSubjectAltNames(spec: Obj, p: string, errs: Errors): void {
  validateIPs(spec.ipAddresses, child(p, 'ipAddresses'), errs);
  validateEmails(spec.emailAddresses, child(p, 'emailAddresses'), errs);
  validateDNSNames(spec.dnsNames, child(p, 'dnsNames'), errs);
  validateURIs(spec.uris, child(p, 'uris'), errs);
  if (Array.isArray(spec.otherNames)) {
    spec.otherNames.forEach((on, i) => {
      if (!isObj(on)) return;
      const op = index(child(p, 'otherNames'), i);
      if (!isStr(on.oid) || on.oid === '') errs.required(child(op, 'oid'), 'must be specified');
      else if (canonicalOID(on.oid) === undefined) errs.invalid(child(op, 'oid'), on.oid, 'invalid oid syntax');
      if (!isStr(on.utf8Value) || on.utf8Value === '') errs.required(child(op, 'utf8Value'), 'must be set to a valid non-empty UTF8 string');
    });
  }
}

/** 9. private key size, 10. signature algorithm against the key algorithm */
function validatePrivateKey(spec: Obj, p: string, errs: Errors): void {
  const pk = isObj(spec.privateKey) ? spec.privateKey : {};
  const alg = isStr(pk.algorithm) && pk.algorithm !== '' ? pk.algorithm : 'RSA';
  const sizePath = child(child(p, 'privateKey'), 'size');
  if (isNum(pk.size) && pk.size !== 0) {
    if (alg === 'RSA' && (pk.size < 2048 || pk.size > 8192)) errs.invalid(sizePath, pk.size, 'must be between 2048 and 8192 for rsa keyAlgorithm');
    if (alg === 'ECDSA' && ![256, 384, 521].includes(pk.size)) errs.notSupported(sizePath, pk.size, ['256', '384', '521']);
  }
  if (isStr(spec.signatureAlgorithm) && (signatureAlgorithms as readonly string[]).includes(spec.signatureAlgorithm)) {
    const allowed: Record<string, string[]> = {
      RSA: ['SHA256WithRSA', 'SHA384WithRSA', 'SHA512WithRSA'],
      ECDSA: ['ECDSAWithSHA256', 'ECDSAWithSHA384', 'ECDSAWithSHA512'],
      Ed25519: ['PureEd25519'],
    };
    if (allowed[alg] && !allowed[alg].includes(spec.signatureAlgorithm)) {
      errs.invalid(child(p, 'signatureAlgorithm'), spec.signatureAlgorithm, `for key algorithm ${alg} the allowed signature algorithms are [${allowed[alg].join(' ')}]`);
    }
  }
}

/** 14. secretTemplate: labels and annotations that end up on the Secret */
function validateSecretTemplate(template: Obj, tp: string, errs: Errors): void {
  validateLabels(template.labels, child(tp, 'labels'), errs);
  validateAnnotationKeys(template.annotations, child(tp, 'annotations'), errs);
  if (isObj(template.annotations)) {
    // they end up on the Secret: the same total as any object's annotations (apimachinery's ValidateAnnotations)
    const total = Object.entries(template.annotations).reduce((n, [k, v]) => n + Buffer.byteLength(k) + (isStr(v) ? Buffer.byteLength(v) : 0), 0);
    if (total > maxAnnotationBytes) errs.tooLong(child(tp, 'annotations'), maxAnnotationBytes);
    for (const k of Object.keys(template.annotations)) {
      if (k.startsWith(CERT_MANAGER_PREFIX) && k !== CAInjectorAnnotation.allowDirectInjection) {
        errs.invalid(mapKey(child(tp, 'annotations'), k), k, 'cert-manager.io/* annotations are not allowed');
      }
    }
  }
}

/** 15. nameConstraints: only on a CA, and each side's IP ranges and e-mail constraints well-formed */
function validateNameConstraints(constraints: Obj, isCA: unknown, np: string, errs: Errors): void {
  if (isCA !== true) errs.invalid(np, constraints, 'isCA should be true when nameConstraints is set');
  if (!isObj(constraints.permitted) && !isObj(constraints.excluded)) errs.invalid(np, constraints, 'either permitted or excluded must be set');
  for (const side of ['permitted', 'excluded'] as const) {
    const item = constraints[side];
    if (!isObj(item)) continue;
    strings(item.ipRanges).forEach((r, i) => { if (!parseCIDR(r)) errs.invalid(index(child(child(np, side), 'ipRanges'), i), r, 'invalid CIDR address'); });
    validateEmailConstraints(item.emailAddresses, child(child(np, side), 'emailAddresses'), errs);
  }
}

/** 16. additionalOutputFormats: each type at most once */
function validateAdditionalOutputFormats(formats: unknown[], fp: string, errs: Errors): void {
  const seen = new Set<string>();
  formats.forEach((f, i) => {
    if (!isObj(f) || !isStr(f.type)) return;
    if (seen.has(f.type)) errs.duplicate(child(index(fp, i), 'type'), f.type);
    seen.add(f.type);
  });
}

/** 17. keystores: exactly one of passwordSecretRef and a non-empty literal password */
function validateKeystores(keystores: Obj, kp: string, errs: Errors): void {
  for (const [k, label] of [['jks', 'JKS'], ['pkcs12', 'PKCS#12']] as const) {
    const ks = keystores[k];
    if (!isObj(ks)) continue;
    const sp = child(kp, k);
    const hasRef = isObj(ks.passwordSecretRef) && isStr(ks.passwordSecretRef.name) && ks.passwordSecretRef.name !== '';
    const hasPw = ks.password !== undefined;
    if (hasRef && hasPw) errs.forbidden(sp, `exactly one of passwordSecretRef and password must be provided for ${label} keystores; cannot set both`);
    else if (!hasRef && !hasPw) errs.required(sp, `must set exactly one of passwordSecretRef and password for ${label} keystores`);
    else if (hasPw && ks.password === '') errs.invalid(child(sp, 'password'), '', `literal password cannot be empty if set on ${label} keystores`);
  }
}

/** 11. duration / renewBefore / renewBeforePercentage */
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
    case 'cronTimeZone': return errs.invalid(p.field, p.value, `invalid cron syntax: ${p.message}`);
  }
}

/** 18. renewal: policy and windows */
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
