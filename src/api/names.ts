// Kubernetes' name rules (k8s.io/apimachinery/pkg/util/validation), written once: object names
// (DNS-1123 labels and subdomains), qualified names (label and annotation keys) and label
// values. Admission validation, the store's own checks and label selectors all ask here, so an
// object one of them accepts is never refused by another. Messages are Kubernetes' own.

const dns1123LabelRe = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1123SubdomainRe = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const dns1123SubdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const dns1123LabelMsg = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

/** Why name is not a DNS-1123 subdomain (the rule for most object names), or undefined. */
export function dns1123SubdomainError(name: string): string | undefined {
  if (name.length > DNS1123_SUBDOMAIN_MAX_LENGTH) return `must be no more than ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`;
  if (!dns1123SubdomainRe.test(name)) return dns1123SubdomainMsg;
  return undefined;
}

/** Why name is not a DNS-1123 label (the rule for Namespace names), or undefined. */
export function dns1123LabelError(name: string): string | undefined {
  if (name.length > DNS1123_LABEL_MAX_LENGTH) return `must be no more than ${DNS1123_LABEL_MAX_LENGTH} characters`;
  if (!dns1123LabelRe.test(name)) return dns1123LabelMsg;
  return undefined;
}

// The name part of a qualified name and a non-empty label value share one alphabet.
const qualifiedNamePartRe = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const QUALIFIED_NAME_MAX_LENGTH = 63;
const LABEL_VALUE_MAX_LENGTH = 63;

/** Why key is not a qualified name (`[prefix/]name`, the rule for label and annotation keys), or undefined. */
export function qualifiedNameError(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, with an optional DNS subdomain prefix and '/'";
  const name = parts[parts.length - 1];
  if (parts.length === 2) {
    if (parts[0] === '') return 'prefix part must be non-empty';
    const pe = dns1123SubdomainError(parts[0]);
    if (pe) return `prefix part ${pe}`;
  }
  if (name.length === 0) return 'name part must be non-empty';
  if (name.length > QUALIFIED_NAME_MAX_LENGTH) return `name part must be no more than ${QUALIFIED_NAME_MAX_LENGTH} characters`;
  if (!qualifiedNamePartRe.test(name)) return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  return undefined;
}

/** Why value is not a label value (empty, or at most 63 characters of the qualified-name alphabet), or undefined. */
export function labelValueError(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > LABEL_VALUE_MAX_LENGTH || !qualifiedNamePartRe.test(value)) {
    return `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, at most ${LABEL_VALUE_MAX_LENGTH} characters`;
  }
  return undefined;
}
