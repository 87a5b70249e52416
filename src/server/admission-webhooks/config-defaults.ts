// kube-apiserver's defaults for admissionregistration.k8s.io/v1 Validating/MutatingWebhook-
// Configurations (pkg/apis/admissionregistration/v1/defaults.go and its generated caller), set
// on write so that `kubectl get -o yaml` shows what the dispatcher will do. v1 sets no default
// for sideEffects or admissionReviewVersions (v1beta1 did): both stay required. Pure.
import type { KubeObject } from '../../api/meta.ts';
import type { ResourceType } from '../../api/resources.ts';
import { isObj, type Obj } from '../../api/validation/field-errors.ts';

/** Go's nil: an absent field or an explicit null is defaulted, anything else is left to validation. */
const unset = (v: unknown) => v === undefined || v === null;

function defaultWebhook(hook: Obj, mutating: boolean) {
  if (unset(hook.failurePolicy)) hook.failurePolicy = 'Fail';
  if (unset(hook.matchPolicy)) hook.matchPolicy = 'Equivalent';
  if (unset(hook.namespaceSelector)) hook.namespaceSelector = {};
  if (unset(hook.objectSelector)) hook.objectSelector = {};
  if (unset(hook.timeoutSeconds)) hook.timeoutSeconds = 10;
  if (mutating && unset(hook.reinvocationPolicy)) hook.reinvocationPolicy = 'Never';
  const service = isObj(hook.clientConfig) ? hook.clientConfig.service : undefined;
  if (isObj(service) && unset(service.port)) service.port = 443;
  if (Array.isArray(hook.rules)) {
    for (const rule of hook.rules) if (isObj(rule) && unset(rule.scope)) rule.scope = '*';
  }
}

/** `obj` with kube's v1 defaults set (a copy; entries that are not objects are left for validation to refuse). */
export function defaultWebhookConfiguration<T extends KubeObject>(type: ResourceType, obj: T): T {
  const out = structuredClone(obj);
  const hooks = (out as Obj).webhooks;
  if (!Array.isArray(hooks)) return out;
  const mutating = type.kind === 'MutatingWebhookConfiguration';
  for (const hook of hooks) if (isObj(hook)) defaultWebhook(hook, mutating);
  return out;
}
