// Issuer and ClusterIssuer: one issuer type, and the ACME issuer's server, account key, EAB and
// solvers (a Challenge's solver is checked by the same rules).
import { isIP } from 'node:net';
import { dns01Providers, issuerTypes, tsigAlgorithms } from '../schema-values.ts';
import { child, index, isObj, isStr, tryDuration, type Errors, type Obj } from './field-errors.ts';
import { dns1123SubdomainError } from '../names.ts';

function present(o: Obj, k: string): boolean {
  return o[k] !== undefined && o[k] !== null;
}

export function validateIssuerSpec(spec: Obj, p: string, errs: Errors): void {
  const configured = issuerTypes.filter((t) => present(spec, t));
  if (configured.length === 0) errs.required(p, 'at least one issuer must be configured');
  for (const extra of configured.slice(1)) errs.forbidden(child(p, extra), 'may not specify more than one issuer type');

  if (isObj(spec.ca) && (!isStr(spec.ca.secretName) || spec.ca.secretName === '')) errs.required(child(child(p, 'ca'), 'secretName'), 'must be specified');
  if (isObj(spec.ca)) {
    // upstream's paths and messages (its OCSP path is "ocspServer", singular)
    const cp = child(p, 'ca');
    (Array.isArray(spec.ca.ocspServers) ? spec.ca.ocspServers : []).forEach((u, i) => {
      if (u === '') errs.invalid(index(child(cp, 'ocspServer'), i), u, 'must be a valid URL, e.g., http://ocsp.int-x3.letsencrypt.org');
    });
    (Array.isArray(spec.ca.issuingCertificateURLs) ? spec.ca.issuingCertificateURLs : []).forEach((u, i) => {
      if (u === '') errs.invalid(index(child(cp, 'issuingCertificateURLs'), i), u, 'must be a valid URL');
    });
  }
  if (isObj(spec.acme)) validateACMEIssuer(spec.acme, child(p, 'acme'), errs);
  if (isObj(spec.vault) && isObj(spec.vault.auth)) {
    const auth = spec.vault.auth;
    // upstream refuses none but, for manifests written before it checked, not several
    const n = ['tokenSecretRef', 'appRole', 'kubernetes', 'clientCertificate', 'aws'].filter((k) => present(auth, k)).length;
    if (n === 0) errs.required(child(child(p, 'vault'), 'auth'), 'please supply one of: appRole, kubernetes, tokenSecretRef, clientCertificate, aws');
  }
  if (isObj(spec.venafi)) {
    const venafi = spec.venafi;
    const n = ['tpp', 'cloud', 'ngts'].filter((k) => present(venafi, k)).length;
    if (n === 0) errs.required(child(p, 'venafi'), 'please supply one of: tpp, cloud, ngts');
    if (n > 1) errs.forbidden(child(p, 'venafi'), 'please supply one of: tpp, cloud, ngts');
  }
}

function validateACMEIssuer(acme: Obj, p: string, errs: Errors): void {
  // upstream asks for a server and nothing more of it: a wrong one shows on the Issuer's Ready condition
  if (!isStr(acme.server) || acme.server === '') errs.required(child(p, 'server'), 'acme server URL is a required field');
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
    if (!isObj(eab.keySecretRef) || !isStr(eab.keySecretRef.key) || eab.keySecretRef.key === '') {
      errs.required(child(child(ep, 'keySecretRef'), 'key'), 'the keySecretRef.key field is required when using externalAccountBinding');
    }
  }
  if (Array.isArray(acme.solvers)) {
    acme.solvers.forEach((s, i) => { if (isObj(s)) validateSolver(s, index(child(p, 'solvers'), i), errs); });
  }
}

const serviceTypes = ['ClusterIP', 'NodePort'];
const base64Re = /^[A-Za-z0-9+/]*={0,2}$/;

export function validateSolver(s: Obj, p: string, errs: Errors): void {
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
      if (k === 'ingress' && isStr(cfg.ingressClassName)) {
        const e = dns1123SubdomainError(cfg.ingressClassName);
        if (e) errs.invalid(child(child(hp, 'ingress'), 'ingressClassName'), cfg.ingressClassName, e);
      }
      if (k === 'gatewayHTTPRoute' && Array.isArray(cfg.parentRefs)) {
        // a ParentReference names its parent; kind defaults to Gateway
        cfg.parentRefs.forEach((ref, i) => {
          if (!isObj(ref) || !isStr(ref.name) || ref.name === '') errs.required(child(index(child(child(hp, k), 'parentRefs'), i), 'name'));
        });
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
  const ref = r.tsigSecretSecretRef;
  if (isStr(r.tsigKeyName) && r.tsigKeyName !== '') {
    if (!isObj(ref) || !isStr(ref.name) || ref.name === '') errs.required(child(child(p, 'tsigSecretSecretRef'), 'name'), 'required when tsigKeyName is set');
  } else if (isObj(ref) && isStr(ref.name) && ref.name !== '' && isStr(ref.key) && ref.key !== '') {
    // a complete TSIG secret reference is useless without the key's name
    errs.required(child(p, 'tsigKeyName'));
  }
}

function validNameserver(ns: string): boolean {
  const hostname = /^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*\.?$/;
  const port = (s: string) => /^\d{1,5}$/.test(s) && Number(s) > 0 && Number(s) < 65536;
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(ns);
  if (bracketed) return isIP(bracketed[1]) === 6 && (bracketed[2] === undefined || port(bracketed[2]));
  // an IPv6 address must be bracketed (Go's SplitHostPort: "too many colons"); a bare IPv4 one is a hostname here
  const i = ns.lastIndexOf(':');
  if (i < 0) return hostname.test(ns);
  const host = ns.slice(0, i);
  return port(ns.slice(i + 1)) && (isIP(host) === 4 || hostname.test(host));
}
