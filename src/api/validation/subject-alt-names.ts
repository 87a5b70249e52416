// The names a certificate can carry (dNSName, iPAddress, rfc822Name, URI SANs): held to what a
// certificate can encode, for Certificates and for the CSR of a CertificateRequest alike.
import { isIP } from 'node:net';
import { isWellFormed } from '../unicode.ts';
import { index, strings, type Errors } from './field-errors.ts';

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

/**
 * An rfc822Name name constraint (RFC 5280 4.2.1.10): a mailbox, a host (all mail at it) or a
 * domain with a leading dot (all mail at hosts below it). cert-manager checks none of these; what
 * no certificate can encode is refused.
 */
export function validateEmailConstraints(v: unknown, path: string, errs: Errors): void {
  strings(v).forEach((e, i) => {
    if (!isWellFormed(e)) return; // reported once, by validateWellFormed
    if (e.includes('@') ? !emailError(e) : /^\.?[A-Za-z0-9_]([-A-Za-z0-9_]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([-A-Za-z0-9_]*[A-Za-z0-9_])?)*$/.test(e)) return;
    errs.invalid(index(path, i), e, 'an e-mail name constraint must be a mailbox, a host name or a domain starting with a dot (e.g. "ops@example.com", "example.com", ".example.com")');
  });
}

export function validateEmails(v: unknown, path: string, errs: Errors): void {
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

export function validateDNSNames(v: unknown, path: string, errs: Errors): void {
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
  // Go's url.Parse, which upstream uses, takes a reference without a scheme ("relative/path");
  // with a scheme, or with what looks like an empty one, it must parse
  if (u.startsWith(':')) return 'invalid URI: missing protocol scheme';
  if (/%(?![0-9A-Fa-f]{2})/.test(u)) return 'invalid URI: invalid URL escape';
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(u)) return undefined;
  return URL.canParse(u) ? undefined : 'invalid URI';
}

export function validateIPs(v: unknown, path: string, errs: Errors): void {
  strings(v).forEach((ip, i) => {
    if (!isWellFormed(ip)) return;
    const e = ipAddressError(ip);
    if (e) errs.invalid(index(path, i), ip, e);
  });
}

export function validateURIs(v: unknown, path: string, errs: Errors): void {
  strings(v).forEach((u, i) => {
    if (!isWellFormed(u)) return;
    const e = uriError(u);
    if (e) errs.invalid(index(path, i), u, e);
  });
}
