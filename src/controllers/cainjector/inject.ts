// The CA injector's decision, as cert-manager's cainjector: which CA an annotated object asks
// for, whether the source may give it, and the object with every caBundle field set to it.
// No I/O: the shell resolves the Certificate and Secret the annotation names and hands them in.
import type { KubeObject, Secret } from '../../api/meta.ts';
import { CAInjectorAnnotation, CertificateAnnotation } from '../../api/annotations.ts';
import {
  APIServiceType, CustomResourceDefinitionType, MutatingWebhookConfigurationType, ValidatingWebhookConfigurationType,
  type ResourceType,
} from '../../api/resources.ts';
import type { EventSpec } from '../decision.ts';
import { type Certificate as CertificateObj } from '../../api/types.ts';

export const INJECT_ANN = CAInjectorAnnotation;

export const INJECT_REASON = {
  badConfig: 'BadConfig',
  refused: 'CAInjectionRefused',
} as const;

const CA_KEY = 'ca.crt';

export type CASource =
  | { kind: 'certificate'; namespace: string; name: string }
  | { kind: 'secret'; namespace: string; name: string }
  | { kind: 'apiserver' };

export type ParsedSource = { source: CASource } | { problem: string } | { none: true };

function namespacedName(value: string): { namespace: string; name: string } | undefined {
  const i = value.indexOf('/');
  if (i <= 0 || i === value.length - 1) return undefined;
  return { namespace: value.slice(0, i), name: value.slice(i + 1) };
}

/**
 * The CA source an object's annotations ask for. As upstream, the first configured source wins:
 * inject-ca-from, then inject-ca-from-secret, then inject-apiserver-ca.
 */
export function caSourceOf(target: KubeObject): ParsedSource {
  const ann = target.metadata.annotations ?? {};
  for (const [key, kind] of [[INJECT_ANN.fromCertificate, 'certificate'], [INJECT_ANN.fromSecret, 'secret']] as const) {
    const value = ann[key];
    if (value === undefined) continue;
    const nn = namespacedName(value.trim());
    if (!nn) return { problem: `annotation ${key}: "${value}" is not <namespace>/<name>` };
    return { source: { kind, ...nn } };
  }
  if (ann[INJECT_ANN.apiServerCA] === 'true') return { source: { kind: 'apiserver' } };
  return { none: true };
}

/** The Secret whose ca.crt a source names: the Certificate's spec.secretName, or the Secret itself. */
export function sourceSecretName(source: CASource, certificate: CertificateObj | undefined): { namespace: string; name: string } | undefined {
  if (source.kind === 'secret') return { namespace: source.namespace, name: source.name };
  if (source.kind === 'certificate' && certificate?.spec?.secretName) return { namespace: source.namespace, name: certificate.spec.secretName };
  return undefined;
}

/** Where a kind keeps its caBundle fields (base64 of a PEM bundle). */
export interface Injectable {
  type: ResourceType;
  /** the caBundle fields the object has now; an empty list when it has nowhere to put one */
  bundles(obj: KubeObject): Array<string | undefined>;
  /** a copy of obj with every caBundle field set */
  withBundle(obj: KubeObject, caBundle: string): KubeObject;
}

interface WebhookLike { clientConfig?: { caBundle?: string; [k: string]: unknown }; [k: string]: unknown }

function webhookInjectable(type: ResourceType): Injectable {
  const webhooks = (obj: KubeObject) => (Array.isArray(obj.webhooks) ? obj.webhooks as WebhookLike[] : []);
  return {
    type,
    bundles: (obj) => webhooks(obj).map((w) => w.clientConfig?.caBundle),
    withBundle(obj, caBundle) {
      const copy = structuredClone(obj);
      copy.webhooks = webhooks(copy).map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle } }));
      return copy;
    },
  };
}

interface APIServiceSpec { caBundle?: string; [k: string]: unknown }

interface CRDConversion {
  strategy?: string;
  webhook?: { clientConfig?: { caBundle?: string; [k: string]: unknown }; [k: string]: unknown };
}

const conversionOf = (obj: KubeObject) => (obj.spec as { conversion?: CRDConversion } | undefined)?.conversion;

const INJECTABLES: readonly Injectable[] = [
  webhookInjectable(ValidatingWebhookConfigurationType),
  webhookInjectable(MutatingWebhookConfigurationType),
  {
    type: APIServiceType,
    bundles: (obj) => [(obj.spec as APIServiceSpec | undefined)?.caBundle],
    withBundle(obj, caBundle) {
      const copy = structuredClone(obj);
      copy.spec = { ...(copy.spec as APIServiceSpec | undefined), caBundle };
      return copy;
    },
  },
  {
    type: CustomResourceDefinitionType,
    // only a CRD converted by a webhook has a client to trust a CA with
    bundles: (obj) => (conversionOf(obj)?.strategy === 'Webhook' ? [conversionOf(obj)?.webhook?.clientConfig?.caBundle] : []),
    withBundle(obj, caBundle) {
      const copy = structuredClone(obj);
      const conversion = conversionOf(copy)!;
      conversion.webhook = { ...conversion.webhook, clientConfig: { ...conversion.webhook?.clientConfig, caBundle } };
      return copy;
    },
  },
];

export function injectableFor(type: ResourceType): Injectable {
  const found = INJECTABLES.find((i) => i.type === type);
  if (!found) throw new Error(`no CA injection into ${type.kind}`);
  return found;
}

export interface InjectionInput {
  target: KubeObject;
  injectable: Injectable;
  /** the Certificate inject-ca-from names, when it exists */
  certificate?: CertificateObj;
  /** the Secret holding the CA (the Certificate's, or the one inject-ca-from-secret names), when it exists */
  secret?: Secret;
  /** PEM of the API server's CA, when known */
  apiServerCA?: string;
}

export interface InjectionDecision {
  /** the object to write, when a caBundle field differs from the CA */
  update?: KubeObject;
  events: EventSpec[];
  /** why nothing or something is written, for logs */
  outcome: string;
}

const nothing = (outcome: string, events: EventSpec[] = []): InjectionDecision => ({ events, outcome });
const refused = (message: string): InjectionDecision => nothing(message, [{ type: 'Warning', reason: INJECT_REASON.refused, message }]);

/** The CA bytes the source gives, or why there are none (with a Warning when the user must act). */
function readCA(input: InjectionInput, source: CASource): { ca: Buffer } | { decision: InjectionDecision } {
  if (source.kind === 'apiserver') {
    return input.apiServerCA ? { ca: Buffer.from(input.apiServerCA) } : { decision: nothing('the API server CA is not known') };
  }
  const secretRef = `${source.namespace}/${source.kind === 'secret' ? source.name : input.certificate?.spec?.secretName ?? ''}`;
  if (source.kind === 'certificate') {
    // not yet created or issued: the Certificate's and the Secret's watches bring us back
    if (!input.certificate) return { decision: nothing(`Certificate ${source.namespace}/${source.name} not found`) };
    if (!input.secret) return { decision: nothing(`Secret ${secretRef} of Certificate ${source.namespace}/${source.name} not found`) };
    const owner = input.secret.metadata.annotations?.[CertificateAnnotation.certificateName];
    if (owner !== source.name) {
      return { decision: refused(`Secret ${secretRef} is not the Secret of Certificate ${source.namespace}/${source.name} (its ${CertificateAnnotation.certificateName} annotation is ${owner === undefined ? 'missing' : `"${owner}"`}); not injecting its CA`) };
    }
  } else {
    if (!input.secret) return { decision: nothing(`Secret ${secretRef} not found`) };
    if (input.secret.metadata.annotations?.[INJECT_ANN.allowDirectInjection] !== 'true') {
      return { decision: refused(`Secret ${secretRef} does not allow direct injection (annotation ${INJECT_ANN.allowDirectInjection}: "true"); not injecting its CA`) };
    }
  }
  const data = input.secret.data?.[CA_KEY];
  if (!data) return { decision: nothing(`Secret ${secretRef} has no ${CA_KEY}`) };
  return { ca: Buffer.from(data, 'base64') };
}

const sameBytes = (b64: string | undefined, want: Buffer) => b64 !== undefined && Buffer.from(b64, 'base64').equals(want);

export function decideInjection(input: InjectionInput): InjectionDecision {
  const { target, injectable } = input;
  if (target.metadata.deletionTimestamp) return nothing('being deleted');
  const parsed = caSourceOf(target);
  if ('none' in parsed) return nothing('no injection annotation');
  if ('problem' in parsed) return nothing(parsed.problem, [{ type: 'Warning', reason: INJECT_REASON.badConfig, message: parsed.problem }]);
  const current = injectable.bundles(target);
  if (current.length === 0) return nothing('no caBundle field to inject into');
  const read = readCA(input, parsed.source);
  if ('decision' in read) return read.decision;
  if (current.every((b) => sameBytes(b, read.ca))) return nothing('caBundle up to date');
  return { update: injectable.withBundle(target, read.ca.toString('base64')), events: [], outcome: 'caBundle updated' };
}
