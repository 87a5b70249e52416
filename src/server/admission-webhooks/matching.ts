// Which registered admission webhooks a request goes to, by kube-apiserver's rules
// (k8s.io/apiserver/pkg/admission/plugin/webhook: rules/rules.go, predicates/namespace and
// predicates/object). Pure: the dispatcher hands in the configurations it caches and the
// labels of the request's namespace.
import type { KubeObject } from '../../api/meta.ts';
import { labelSelectorFromObject, matchesLabels, type LabelSelectorObject } from '../../store/selectors.ts';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface WebhookRule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace?: string; name?: string; path?: string; port?: number };
  caBundle?: string;
}

/** One entry of `webhooks` in a Validating/MutatingWebhookConfiguration (admissionregistration.k8s.io/v1). */
export interface Webhook {
  name: string;
  clientConfig?: WebhookClientConfig;
  rules?: WebhookRule[];
  failurePolicy?: string;
  matchPolicy?: string;
  namespaceSelector?: LabelSelectorObject | null;
  objectSelector?: LabelSelectorObject | null;
  sideEffects?: string;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  reinvocationPolicy?: string;
  matchConditions?: unknown[];
}

export interface WebhookConfiguration extends KubeObject {
  webhooks?: Webhook[] | null;
}

/** What a request is about, as the matching rules see it. */
export interface RequestAttributes {
  group: string;
  version: string;
  /** plural resource name, e.g. certificates */
  resource: string;
  /** '' for the main resource, e.g. 'status' */
  subresource: string;
  operation: AdmissionOperation;
  /** '' for cluster-scoped objects */
  namespace: string;
  object?: KubeObject;
  oldObject?: KubeObject;
}

/** One webhook to call, with the configuration it came from. */
export interface RegisteredWebhook {
  configuration: string;
  hook: Webhook;
  /** kube's webhook UID, `<configuration>/<name>/<n>` (n counts earlier webhooks of that name in the configuration) */
  uid: string;
}

/**
 * Kinds no webhook is ever called for: the webhook configurations themselves, so that a broken
 * webhook can always be unregistered (kube-apiserver exempts them the same way).
 */
export function isExempt(group: string, resource: string): boolean {
  return group === 'admissionregistration.k8s.io'
    && (resource === 'validatingwebhookconfigurations' || resource === 'mutatingwebhookconfigurations');
}

const any = (list: string[] | undefined, value: string) => !!list && (list.includes('*') || list.includes(value));

/** rules.go's resource(): `*` matches every main resource, `x/*` every subresource of x, `*\/*` everything. */
function resourceMatches(patterns: string[] | undefined, resource: string, subresource: string): boolean {
  for (const p of patterns ?? []) {
    const slash = p.indexOf('/');
    const res = slash < 0 ? p : p.slice(0, slash);
    const sub = slash < 0 ? '' : p.slice(slash + 1);
    if ((res === '*' || res === resource) && (sub === '*' || sub === subresource)) return true;
  }
  return false;
}

/** rules.go's scope(): a Namespace object counts as cluster-scoped. */
function scopeMatches(scope: string | undefined, a: RequestAttributes): boolean {
  const isNamespace = a.group === '' && a.resource === 'namespaces';
  if (scope === 'Namespaced') return !isNamespace && a.namespace !== '';
  if (scope === 'Cluster') return isNamespace || a.namespace === '';
  return true;
}

export function ruleMatches(rule: WebhookRule, a: RequestAttributes): boolean {
  return any(rule.operations, a.operation)
    && any(rule.apiGroups, a.group)
    && any(rule.apiVersions, a.version)
    && resourceMatches(rule.resources, a.resource, a.subresource)
    && scopeMatches(rule.scope, a);
}

/** Whether any rule of the hook could match, before selectors (which need the objects and the namespace). */
export function rulesMatch(hook: Webhook, a: RequestAttributes): boolean {
  return (hook.rules ?? []).some((r) => ruleMatches(r, a));
}

const isEmptySelector = (s: LabelSelectorObject | null | undefined) =>
  !s || (Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0);

/** True when the hook's namespaceSelector needs the labels of the request's namespace. */
export function needsNamespaceLabels(hook: Webhook, a: RequestAttributes): boolean {
  return a.namespace !== '' && !isEmptySelector(hook.namespaceSelector) && !(a.group === '' && a.resource === 'namespaces');
}

export class SelectorError extends Error {}

function selects(selector: LabelSelectorObject | null | undefined, labels: Record<string, string> | undefined, hook: Webhook, field: string): boolean {
  let parsed;
  try {
    parsed = labelSelectorFromObject(selector);
  } catch (e) {
    throw new SelectorError(`webhook "${hook.name}": invalid ${field}: ${(e as Error).message}`);
  }
  return matchesLabels(parsed, labels);
}

/**
 * predicates/namespace: a cluster-scoped object other than a Namespace is never exempted; a
 * Namespace is matched on its own labels; anything else on its namespace's labels.
 */
function namespaceSelected(hook: Webhook, a: RequestAttributes, namespaceLabels: Record<string, string> | undefined): boolean {
  if (isEmptySelector(hook.namespaceSelector)) return true;
  const isNamespace = a.group === '' && a.resource === 'namespaces';
  if (isNamespace) {
    const ns = a.object ?? a.oldObject;
    return selects(hook.namespaceSelector, ns?.metadata?.labels, hook, 'namespaceSelector');
  }
  if (a.namespace === '') return true;
  return selects(hook.namespaceSelector, namespaceLabels, hook, 'namespaceSelector');
}

/** predicates/object: the new or the old object's labels match. */
function objectSelected(hook: Webhook, a: RequestAttributes): boolean {
  if (isEmptySelector(hook.objectSelector)) return true;
  return (!!a.object && selects(hook.objectSelector, a.object.metadata?.labels, hook, 'objectSelector'))
    || (!!a.oldObject && selects(hook.objectSelector, a.oldObject.metadata?.labels, hook, 'objectSelector'));
}

/**
 * The webhooks a request goes to, in kube-apiserver's order: configurations sorted by name,
 * webhooks in their order within one. `namespaceLabels` are the labels of the request's
 * namespace (only read when some selector needs them). Throws SelectorError for a selector
 * that does not parse (kube-apiserver's internal error).
 */
export function matchingWebhooks(configs: WebhookConfiguration[], a: RequestAttributes, namespaceLabels?: Record<string, string>): RegisteredWebhook[] {
  if (isExempt(a.group, a.resource)) return [];
  const out: RegisteredWebhook[] = [];
  // byte order, as Go's sort of the names
  const sorted = [...configs].sort((x, y) => ((x.metadata.name ?? '') < (y.metadata.name ?? '') ? -1 : (x.metadata.name ?? '') > (y.metadata.name ?? '') ? 1 : 0));
  for (const c of sorted) {
    const configuration = c.metadata.name ?? '';
    const seen = new Map<string, number>();
    for (const hook of c.webhooks ?? []) {
      if (!hook || typeof hook.name !== 'string') continue;
      const n = seen.get(hook.name) ?? 0;
      seen.set(hook.name, n + 1);
      if (!rulesMatch(hook, a)) continue;
      if (!namespaceSelected(hook, a, namespaceLabels)) continue;
      if (!objectSelected(hook, a)) continue;
      out.push({ configuration, hook, uid: `${configuration}/${hook.name}/${n}` });
    }
  }
  return out;
}
