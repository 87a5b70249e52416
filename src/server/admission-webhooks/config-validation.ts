// What kube-apiserver refuses in a Validating/MutatingWebhookConfiguration
// (admissionregistration.k8s.io/v1) when it is written, with its field paths and wording
// (pkg/apis/admissionregistration/validation and k8s.io/apiserver/pkg/util/webhook). Without
// this, a mistake in a configuration (an http:// URL, no known AdmissionReview version) would
// only show when a write reaches the webhook, as a call failure. Pure (matchConditions'
// compiled programs are cached).
import type { KubeObject } from '../../api/meta.ts';
import { MutatingWebhookConfigurationType, ValidatingWebhookConfigurationType, type ResourceType } from '../../api/resources.ts';
import { dns1123SubdomainError, labelValueError, qualifiedNameError } from '../../api/names.ts';
import { validateMetadata } from '../../api/validation/metadata.ts';
import { child, Errors, goStringSlice, index, isObj, isStr, type FieldError, type Obj } from '../../api/validation/field-errors.ts';
import { compileCondition, CompileError, maxMatchConditions } from './match-conditions.ts';

export function isWebhookConfigurationType(type: ResourceType): boolean {
  return type === ValidatingWebhookConfigurationType || type === MutatingWebhookConfigurationType
    || (type.group === 'admissionregistration.k8s.io' && (type.plural === 'validatingwebhookconfigurations' || type.plural === 'mutatingwebhookconfigurations'));
}

/** AdmissionReview versions the server understands (kube's AcceptedAdmissionReviewVersions). */
const acceptedReviewVersions = ['v1', 'v1beta1'];
// the supported values in kube's order (sets.List(): sorted)
const failurePolicies = ['Fail', 'Ignore'];
const matchPolicies = ['Equivalent', 'Exact'];
const noSideEffects = ['None', 'NoneOnDryRun'];
const allSideEffects = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const operations = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const scopes = ['*', 'Cluster', 'Namespaced'];
const reinvocationPolicies = ['IfNeeded', 'Never'];
const urlForm = '; desired format: https://host[/path]';
const dns1035LabelRe = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Which rules apply. An update is held to a rule only when the stored configuration already
 * kept it, as kube does, so a configuration stored before a rule existed can still be changed.
 */
interface Rules {
  requireNoSideEffects: boolean;
  requireRecognizedReviewVersion: boolean;
  requireUniqueWebhookNames: boolean;
  allowInvalidLabelValueInSelector: boolean;
  checkMatchConditions: boolean;
}

const hooksOf = (obj: KubeObject | undefined): Obj[] => {
  const list = (obj as Obj | undefined)?.webhooks;
  return Array.isArray(list) ? list.map((h) => (isObj(h) ? h : {})) : [];
};
const stringList = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => (isStr(x) ? x : String(x))) : []);

function rulesFor(old: KubeObject | undefined, obj: KubeObject): Rules {
  if (!old) return { requireNoSideEffects: true, requireRecognizedReviewVersion: true, requireUniqueWebhookNames: true, allowInvalidLabelValueInSelector: false, checkMatchConditions: true };
  const before = hooksOf(old);
  const after = hooksOf(obj);
  const names = before.map((h) => h.name);
  return {
    requireNoSideEffects: before.every((h) => isStr(h.sideEffects) && noSideEffects.includes(h.sideEffects)),
    requireRecognizedReviewVersion: before.every((h) => {
      const v = stringList(h.admissionReviewVersions);
      return v.length === 0 || v.some((x) => acceptedReviewVersions.includes(x));
    }),
    requireUniqueWebhookNames: new Set(names).size === names.length,
    allowInvalidLabelValueInSelector: before.some((h) => selectorHasInvalidLabelValue(h.namespaceSelector) || selectorHasInvalidLabelValue(h.objectSelector)),
    checkMatchConditions: before.length !== after.length || before.some((h, i) => JSON.stringify(h.matchConditions ?? null) !== JSON.stringify(after[i].matchConditions ?? null)),
  };
}

/** Every problem kube-apiserver would refuse `obj` for; `old` is the stored configuration on an update. */
export function validateWebhookConfiguration(type: ResourceType, obj: KubeObject, old?: KubeObject): FieldError[] {
  const errs = new Errors();
  validateMetadata(type, obj, errs);
  const rules = rulesFor(old, obj);
  const mutating = type.kind === 'MutatingWebhookConfiguration';
  const raw = (obj as Obj).webhooks;
  if (raw !== undefined && raw !== null && !Array.isArray(raw)) {
    errs.invalid('webhooks', '', 'must be a list');
    return errs.list;
  }
  const seen = new Set<string>();
  (Array.isArray(raw) ? raw : []).forEach((h, i) => {
    const path = index('webhooks', i);
    const hook = isObj(h) ? h : {};
    validateWebhook(hook, path, mutating, rules, errs);
    validateReviewVersions(hook.admissionReviewVersions, rules.requireRecognizedReviewVersion, child(path, 'admissionReviewVersions'), errs);
    if (rules.requireUniqueWebhookNames && isStr(hook.name) && hook.name !== '') {
      if (seen.has(hook.name)) errs.duplicate(child(path, 'name'), hook.name);
      else seen.add(hook.name);
    }
  });
  return errs.list;
}

function validateWebhook(hook: Obj, path: string, mutating: boolean, rules: Rules, errs: Errors) {
  fullyQualifiedName(hook.name, child(path, 'name'), errs);
  if (Array.isArray(hook.rules)) hook.rules.forEach((r, i) => validateRule(isObj(r) ? r : {}, index(child(path, 'rules'), i), errs));
  oneOf(hook.failurePolicy, failurePolicies, child(path, 'failurePolicy'), errs);
  oneOf(hook.matchPolicy, matchPolicies, child(path, 'matchPolicy'), errs);
  const allowedSideEffects = rules.requireNoSideEffects ? noSideEffects : allSideEffects;
  if (hook.sideEffects === undefined || hook.sideEffects === null) errs.required(child(path, 'sideEffects'), `must specify one of ${allowedSideEffects.join(', ')}`);
  else oneOf(hook.sideEffects, allowedSideEffects, child(path, 'sideEffects'), errs);
  const timeout = hook.timeoutSeconds;
  if (timeout !== undefined && timeout !== null) {
    if (typeof timeout !== 'number' || !Number.isInteger(timeout)) errs.invalid(child(path, 'timeoutSeconds'), timeout, 'must be an integer');
    else if (timeout > 30 || timeout < 1) errs.invalid(child(path, 'timeoutSeconds'), timeout, 'the timeout value must be between 1 and 30 seconds');
  }
  for (const field of ['namespaceSelector', 'objectSelector'] as const) {
    if (hook[field] !== undefined && hook[field] !== null) validateLabelSelector(hook[field], rules.allowInvalidLabelValueInSelector, child(path, field), errs);
  }
  if (mutating) oneOf(hook.reinvocationPolicy, reinvocationPolicies, child(path, 'reinvocationPolicy'), errs);
  validateClientConfig(hook.clientConfig, child(path, 'clientConfig'), errs);
  if (rules.checkMatchConditions) validateMatchConditions(hook.matchConditions, child(path, 'matchConditions'), errs);
}

/** An enum field: absent is fine (the server defaults it); anything else must be a supported value. */
function oneOf(v: unknown, supported: readonly string[], path: string, errs: Errors) {
  if (v === undefined || v === null) return;
  if (!isStr(v) || !supported.includes(v)) errs.notSupported(path, v, supported);
}

/** utilvalidation.IsFullyQualifiedName: a DNS subdomain of at least three labels. */
function fullyQualifiedName(name: unknown, path: string, errs: Errors) {
  if (!isStr(name) || name === '') {
    errs.required(path);
    return;
  }
  const e = dns1123SubdomainError(name);
  if (e) errs.invalid(path, name, e);
  else if (name.split('.').length < 3) errs.invalid(path, name, 'should be a domain with at least three segments separated by dots');
}

function validateReviewVersions(v: unknown, requireRecognized: boolean, path: string, errs: Errors) {
  const versions = stringList(v);
  if (versions.length < 1) {
    errs.required(path, `must specify one of ${acceptedReviewVersions.join(', ')}`);
    return;
  }
  const seen = new Set<string>();
  let accepted = false;
  versions.forEach((version, i) => {
    if (seen.has(version)) {
      errs.invalid(index(path, i), version, 'duplicate version');
      return;
    }
    seen.add(version);
    if (version.length > 63) errs.invalid(index(path, i), version, 'must be no more than 63 characters');
    if (!dns1035LabelRe.test(version)) {
      errs.invalid(index(path, i), version, "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
    }
    if (acceptedReviewVersions.includes(version)) accepted = true;
  });
  if (requireRecognized && !accepted) errs.invalid(path, goStringSlice(versions), `must include at least one of ${acceptedReviewVersions.join(', ')}`);
}

function validateRule(rule: Obj, path: string, errs: Errors) {
  const ops = stringList(rule.operations);
  const opsPath = child(path, 'operations');
  if (ops.length === 0) errs.required(opsPath);
  if (ops.length > 1 && ops.includes('*')) errs.invalid(opsPath, goStringSlice(ops, 'admissionregistration.OperationType'), "if '*' is present, must not specify other operations");
  ops.forEach((op, i) => { if (!operations.includes(op)) errs.notSupported(index(opsPath, i), op, operations); });

  const groups = stringList(rule.apiGroups);
  if (groups.length === 0) errs.required(child(path, 'apiGroups'));
  if (groups.length > 1 && groups.includes('*')) errs.invalid(child(path, 'apiGroups'), goStringSlice(groups), "if '*' is present, must not specify other API groups");
  // a group may be empty (the core group); a version may not
  const versions = stringList(rule.apiVersions);
  if (versions.length === 0) errs.required(child(path, 'apiVersions'));
  if (versions.length > 1 && versions.includes('*')) errs.invalid(child(path, 'apiVersions'), goStringSlice(versions), "if '*' is present, must not specify other API versions");
  versions.forEach((v, i) => { if (v === '') errs.required(index(child(path, 'apiVersions'), i)); });
  validateResources(stringList(rule.resources), child(path, 'resources'), errs);
  oneOf(rule.scope, scopes, child(path, 'scope'), errs);
}

/** `x/*` and `*\/x` exclude naming their members again; `*\/*` stands alone; `*` excludes plain resources. */
function validateResources(resources: string[], path: string, errs: Errors) {
  if (resources.length === 0) errs.required(path);
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let plainResource = false;
  resources.forEach((r, i) => {
    if (r === '') {
      errs.required(index(path, i));
      return;
    }
    if (r === '*/*') doubleWildcard = true;
    if (r === '*') singleWildcard = true;
    const slash = r.indexOf('/');
    if (slash < 0) {
      // kube keeps only the last plain entry's answer here
      plainResource = r !== '*';
      return;
    }
    const res = r.slice(0, slash);
    const sub = r.slice(slash + 1);
    if (withWildcardSub.has(res)) errs.invalid(index(path, i), r, `if '${res}/*' is present, must not specify ${r}`);
    if (subWithWildcardRes.has(sub)) errs.invalid(index(path, i), r, `if '*/${sub}' is present, must not specify ${r}`);
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) errs.invalid(path, goStringSlice(resources), "if '*/*' is present, must not specify other resources");
  if (singleWildcard && plainResource) errs.invalid(path, goStringSlice(resources), "if '*' is present, must not specify other resources without subresources");
}

function selectorHasInvalidLabelValue(selector: unknown): boolean {
  if (!isObj(selector) || !Array.isArray(selector.matchExpressions)) return false;
  return selector.matchExpressions.some((e) => isObj(e) && stringList(e.values).some((v) => !!labelValueError(v)));
}

/** metav1validation.ValidateLabelSelector */
function validateLabelSelector(selector: unknown, allowInvalidValues: boolean, path: string, errs: Errors) {
  if (!isObj(selector)) {
    errs.invalid(path, '', 'must be a label selector object');
    return;
  }
  if (isObj(selector.matchLabels)) {
    const p = child(path, 'matchLabels');
    for (const [k, v] of Object.entries(selector.matchLabels)) {
      const ke = qualifiedNameError(k);
      if (ke) errs.invalid(p, k, ke);
      const ve = isStr(v) ? labelValueError(v) : 'must be a string';
      if (ve) errs.invalid(p, v, ve);
    }
  }
  if (!Array.isArray(selector.matchExpressions)) return;
  selector.matchExpressions.forEach((e, i) => {
    const p = index(child(path, 'matchExpressions'), i);
    const req = isObj(e) ? e : {};
    const values = stringList(req.values);
    switch (req.operator) {
      case 'In': case 'NotIn':
        if (values.length === 0) errs.required(child(p, 'values'), "must be specified when `operator` is 'In' or 'NotIn'");
        break;
      case 'Exists': case 'DoesNotExist':
        if (values.length > 0) errs.forbidden(child(p, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
        break;
      default:
        errs.invalid(child(p, 'operator'), req.operator ?? '', 'not a valid selector operator');
    }
    const key = isStr(req.key) ? req.key : '';
    const ke = qualifiedNameError(key);
    if (ke) errs.invalid(child(p, 'key'), key, ke);
    if (!allowInvalidValues) {
      values.forEach((v, j) => {
        const ve = labelValueError(v);
        if (ve) errs.invalid(index(child(p, 'values'), j), v, ve);
      });
    }
  });
}

function validateClientConfig(v: unknown, path: string, errs: Errors) {
  const cc = isObj(v) ? v : {};
  const hasURL = cc.url !== undefined && cc.url !== null;
  const hasService = cc.service !== undefined && cc.service !== null;
  if (hasURL === hasService) errs.required(path, 'exactly one of url or service is required');
  else if (hasURL) validateWebhookURL(cc.url, child(path, 'url'), errs);
  else validateWebhookService(cc.service, child(path, 'service'), errs);
}

interface GoURL { scheme: string; host: string; user?: string; fragment: string; rawQuery: string }

/**
 * The parts of a URL as Go's url.Parse splits them, which is what kube's rules are about
 * (WHATWG URL parsing, Node's, would add a host or a slash kube does not see); a string
 * Go cannot parse gives its error.
 */
function parseGoURL(raw: string): GoURL | { error: string } {
  const fail = (why: string) => ({ error: `parse ${JSON.stringify(raw)}: ${why}` });
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(raw)) return fail('net/url: invalid control character in URL');
  const hash = raw.indexOf('#');
  const fragment = hash < 0 ? '' : raw.slice(hash + 1);
  let rest = hash < 0 ? raw : raw.slice(0, hash);
  let scheme = '';
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(rest);
  if (m) {
    scheme = m[1].toLowerCase();
    rest = rest.slice(m[0].length);
  } else if (rest.startsWith(':')) return fail('missing protocol scheme');
  const q = rest.indexOf('?');
  const rawQuery = q < 0 ? '' : rest.slice(q + 1);
  if (q >= 0) rest = rest.slice(0, q);
  if (!rest.startsWith('//')) return { scheme, host: '', fragment, rawQuery };
  const authority = rest.slice(2).split('/')[0];
  const at = authority.lastIndexOf('@');
  const user = at < 0 ? undefined : authority.slice(0, at);
  const host = at < 0 ? authority : authority.slice(at + 1);
  const port = /^(\[[^\]]*\]|[^:]*)(:.*)?$/.exec(host)?.[2];
  if (port !== undefined && !/^:[0-9]*$/.test(port)) return fail(`invalid port ${JSON.stringify(port)} after host`);
  return { scheme, host, user, fragment, rawQuery };
}

/** webhook.ValidateWebhookURL with https forced, as for admission webhooks */
function validateWebhookURL(v: unknown, path: string, errs: Errors) {
  const raw = isStr(v) ? v : String(v);
  const u = parseGoURL(raw);
  if ('error' in u) {
    errs.required(path, `url must be a valid URL: ${u.error}${urlForm}`);
    return;
  }
  if (u.scheme !== 'https') errs.invalid(path, u.scheme, `'https' is the only allowed URL scheme${urlForm}`);
  if (u.host === '') errs.invalid(path, u.host, `host must be provided${urlForm}`);
  if (u.user !== undefined) errs.invalid(path, u.user, 'user information is not permitted in the URL');
  if (u.fragment !== '') errs.invalid(path, u.fragment, 'fragments are not permitted in the URL');
  if (u.rawQuery !== '') errs.invalid(path, u.rawQuery, 'query parameters are not permitted in the URL');
}

/** webhook.ValidateWebhookService; an absent port is v1's default, 443 */
function validateWebhookService(v: unknown, path: string, errs: Errors) {
  const svc = isObj(v) ? v : {};
  if (!isStr(svc.name) || svc.name === '') errs.required(child(path, 'name'), 'service name is required');
  if (!isStr(svc.namespace) || svc.namespace === '') errs.required(child(path, 'namespace'), 'service namespace is required');
  const port = svc.port ?? 443;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    errs.invalid(child(path, 'port'), port, 'port is not valid: must be between 1 and 65535, inclusive');
  }
  if (svc.path === undefined || svc.path === null) return;
  const p = isStr(svc.path) ? svc.path : String(svc.path);
  const pathField = child(path, 'path');
  if (p === '/' || p === '') return;
  if (p === '//') {
    errs.invalid(pathField, p, 'segment[0] may not be empty');
    return;
  }
  if (!p.startsWith('/')) errs.invalid(pathField, p, "must start with a '/'");
  let steps = p.slice(1);
  if (steps.endsWith('/')) steps = steps.slice(0, -1);
  steps.split('/').forEach((step, i) => {
    if (step === '') {
      errs.invalid(pathField, p, `segment[${i}] may not be empty`);
      return;
    }
    const e = dns1123SubdomainError(step);
    if (e) errs.invalid(pathField, p, `segment[${i}]: ${e}`);
  });
}

/** kube's rules for matchConditions: at most 64, names unique qualified names, each expression a CEL program that compiles. */
function validateMatchConditions(v: unknown, path: string, errs: Errors) {
  if (!Array.isArray(v)) return;
  // kube says `Too many: 65: must have at most 64 items`; FieldError has no TooMany reason yet
  if (v.length > maxMatchConditions) errs.invalid(path, v.length, `must have at most ${maxMatchConditions} items`);
  const names = new Set<string>();
  v.forEach((c, i) => {
    const cond = isObj(c) ? c : {};
    const p = index(path, i);
    const expression = isStr(cond.expression) ? cond.expression.trim() : '';
    if (expression === '') errs.required(child(p, 'expression'));
    else {
      try {
        compileCondition(expression);
      } catch (e) {
        if (!(e instanceof CompileError)) throw e;
        errs.invalid(child(p, 'expression'), expression, e.message);
      }
    }
    const name = isStr(cond.name) ? cond.name : '';
    if (name === '') errs.required(child(p, 'name'));
    else {
      const e = qualifiedNameError(name);
      if (e) errs.invalid(child(p, 'name'), name, e);
      if (names.has(name)) errs.duplicate(child(p, 'name'), name);
      else names.add(name);
    }
  });
}
