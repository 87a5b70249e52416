// CertificateRequest: the CSR (read by the signers' parser), approval conditions, and what may
// not change after creation.
import { isDeepStrictEqual } from 'node:util';
import { parseCSR } from '../../pki/csr.ts';
import { isCertManagerKey } from '../annotations.ts';
import type { KubeObject } from '../meta.ts';
import { isObj, isStr, mapKey, tryDuration, type Errors, type Obj } from './field-errors.ts';
import { csrUsagesError } from './csr-usages.ts';
import { validateIssuerRef } from './issuer-ref.ts';
import { dnsNameError, emailError, ipAddressError, uriError } from './subject-alt-names.ts';

/**
 * The CSR is read by the parser the signers use (pki/csr.ts: structure and signature), held to
 * spec.isCA and spec.usages as upstream holds it (csr-usages.ts, issue 15), and the names it
 * carries are held to the Certificate's rules, since the issuer signs them (issue 12, finding 7):
 * the first bad name, as `encoded CSR error: dnsNames[1]: Invalid value: ...`.
 */
function csrError(request: string, spec: Obj): string | undefined {
  const pem = Buffer.from(request, 'base64').toString('latin1');
  if (!/-----BEGIN (NEW )?CERTIFICATE REQUEST-----[\s\S]*?-----END (NEW )?CERTIFICATE REQUEST-----/.test(pem)) {
    return 'encoded CSR error: failed to decode PEM block containing certificate request';
  }
  let csr;
  try {
    csr = parseCSR(pem);
  } catch (err) {
    return `encoded CSR error: ${(err as Error).message}`;
  }
  const usages = csrUsagesError(csr, spec.isCA === true, spec.usages);
  if (usages) return usages;
  const t = csr.template;
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

export function validateCertificateRequest(obj: KubeObject, old: KubeObject | undefined, errs: Errors): void {
  const spec = isObj(obj.spec) ? obj.spec : undefined;
  if (spec) {
    validateIssuerRef(spec.issuerRef, 'spec.issuerRef', errs);
    if (!old && isStr(spec.request) && spec.request !== '') {
      const e = csrError(spec.request, spec);
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
