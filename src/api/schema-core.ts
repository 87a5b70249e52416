// Kubernetes core and Gateway API types that cert-manager's CRDs embed (the HTTP-01 solver's pod
// template, label selectors, Gateway parent references), typed as kube-apiserver's OpenAPI types
// them so the CRDs, `kubectl explain` and structural validation see every field. Imported by
// schema.ts; nothing here knows about cert-manager.

import { Type, Kind, TypeRegistry, type TSchema, type SchemaOptions } from '@sinclair/typebox';

// resource.Quantity: an integer or a string in Kubernetes' quantity syntax
const quantityPattern = '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
const quantityRegExp = new RegExp(quantityPattern);
TypeRegistry.Set('IntOrString', (schema: { pattern?: string }, value) =>
  (typeof value === 'number' && Number.isInteger(value))
  || (typeof value === 'string' && (schema.pattern === undefined || (schema.pattern === quantityPattern ? quantityRegExp : new RegExp(schema.pattern)).test(value))));

/** An integer or a string (x-kubernetes-int-or-string), written in the one anyOf form structural schemas allow. */
export function IntOrString(options: SchemaOptions = {}) {
  return Type.Unsafe<number | string>({
    ...options, [Kind]: 'IntOrString', 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }],
  });
}

const opt = <T extends TSchema>(s: T) => Type.Optional(s);
const atomicList = <T extends TSchema>(items: T, options: SchemaOptions = {}) => Type.Array(items, { ...options, 'x-kubernetes-list-type': 'atomic' });
const strings = () => atomicList(Type.String());
const int64 = () => Type.Integer({ format: 'int64' });
const int32 = () => Type.Integer({ format: 'int32' });
export const StringMapSchema = Type.Record(Type.String(), Type.String());

/** The labels and annotations of a generated object. */
export const ObjectMetaTemplateSchema = Type.Object({
  annotations: opt(StringMapSchema),
  labels: opt(StringMapSchema),
});

/** core/v1 LocalObjectReference as pod specs use it (name defaults to ""). */
export const CoreLocalObjectReferenceSchema = Type.Object({
  name: opt(Type.String({ default: '', description: 'Name of the referent.' })),
}, { 'x-kubernetes-map-type': 'atomic' });

// ---------------------------------------------------------------------------------------------
// selectors and affinity

const requirement = () => Type.Object({
  key: Type.String(),
  operator: Type.String({ description: 'In, NotIn, Exists or DoesNotExist (Gt and Lt for node fields).' }),
  values: opt(strings()),
});

export const LabelSelectorSchema = Type.Object({
  matchExpressions: opt(atomicList(requirement())),
  matchLabels: opt(StringMapSchema),
}, { 'x-kubernetes-map-type': 'atomic' });

export const NodeSelectorTermSchema = Type.Object({
  matchExpressions: opt(atomicList(requirement())),
  matchFields: opt(atomicList(requirement())),
}, { 'x-kubernetes-map-type': 'atomic' });

export const NodeAffinitySchema = Type.Object({
  preferredDuringSchedulingIgnoredDuringExecution: opt(atomicList(Type.Object({
    preference: NodeSelectorTermSchema,
    weight: int32(),
  }))),
  requiredDuringSchedulingIgnoredDuringExecution: opt(Type.Object({
    nodeSelectorTerms: atomicList(NodeSelectorTermSchema),
  }, { 'x-kubernetes-map-type': 'atomic' })),
});

export const PodAffinityTermSchema = Type.Object({
  labelSelector: opt(LabelSelectorSchema),
  matchLabelKeys: opt(strings()),
  mismatchLabelKeys: opt(strings()),
  namespaceSelector: opt(LabelSelectorSchema),
  namespaces: opt(strings()),
  topologyKey: Type.String({ description: 'Node label whose value groups co-located pods.' }),
});

const podAffinity = () => Type.Object({
  preferredDuringSchedulingIgnoredDuringExecution: opt(atomicList(Type.Object({
    podAffinityTerm: PodAffinityTermSchema,
    weight: int32(),
  }))),
  requiredDuringSchedulingIgnoredDuringExecution: opt(atomicList(PodAffinityTermSchema)),
});

export const AffinitySchema = Type.Object({
  nodeAffinity: opt(NodeAffinitySchema),
  podAffinity: opt(podAffinity()),
  podAntiAffinity: opt(podAffinity()),
}, { description: 'Scheduling constraints of the solver pod.' });

export const TolerationSchema = Type.Object({
  effect: opt(Type.String()),
  key: opt(Type.String()),
  operator: opt(Type.String()),
  tolerationSeconds: opt(int64()),
  value: opt(Type.String()),
});

// ---------------------------------------------------------------------------------------------
// security context and resources

export const PodSecurityContextSchema = Type.Object({
  fsGroup: opt(int64()),
  fsGroupChangePolicy: opt(Type.String()),
  runAsGroup: opt(int64()),
  runAsNonRoot: opt(Type.Boolean()),
  runAsUser: opt(int64()),
  seLinuxOptions: opt(Type.Object({
    level: opt(Type.String()),
    role: opt(Type.String()),
    type: opt(Type.String()),
    user: opt(Type.String()),
  })),
  seccompProfile: opt(Type.Object({
    localhostProfile: opt(Type.String()),
    type: Type.String({ description: 'Localhost, RuntimeDefault or Unconfined.' }),
  })),
  supplementalGroups: opt(atomicList(int64())),
  sysctls: opt(atomicList(Type.Object({ name: Type.String(), value: Type.String() }))),
}, { description: 'Pod-level security attributes of the solver pod.' });

const quantityMap = () => Type.Record(Type.String(), IntOrString({ pattern: quantityPattern }));

export const ResourceRequirementsSchema = Type.Object({
  limits: opt(quantityMap()),
  requests: opt(quantityMap()),
}, { description: 'Compute resources of the solver pod.' });

// ---------------------------------------------------------------------------------------------
// pod template

export const PodTemplateSpecSchema = Type.Object({
  affinity: opt(AffinitySchema),
  imagePullSecrets: opt(Type.Array(CoreLocalObjectReferenceSchema, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })),
  nodeSelector: opt(StringMapSchema),
  priorityClassName: opt(Type.String()),
  resources: opt(ResourceRequirementsSchema),
  securityContext: opt(PodSecurityContextSchema),
  serviceAccountName: opt(Type.String()),
  tolerations: opt(atomicList(TolerationSchema)),
}, { description: 'The subset of a PodSpec a solver pod template may set.' });

export const PodTemplateSchema = Type.Object({
  metadata: opt(ObjectMetaTemplateSchema),
  spec: opt(PodTemplateSpecSchema),
}, { description: 'Overrides for the HTTP-01 solver pod.' });

// ---------------------------------------------------------------------------------------------
// Gateway API

const dnsSubdomain = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/** gateway.networking.k8s.io ParentReference: the Gateway (or listener) an HTTPRoute attaches to. */
export const GatewayParentReferenceSchema = Type.Object({
  group: opt(Type.String({ default: 'gateway.networking.k8s.io', maxLength: 253, pattern: `^$|${dnsSubdomain}` })),
  kind: opt(Type.String({ default: 'Gateway', maxLength: 63, minLength: 1, pattern: '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$' })),
  name: Type.String({ maxLength: 253, minLength: 1 }),
  namespace: opt(Type.String({ maxLength: 63, minLength: 1, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' })),
  port: opt(Type.Integer({ format: 'int32', minimum: 1, maximum: 65535 })),
  sectionName: opt(Type.String({ maxLength: 253, minLength: 1, pattern: dnsSubdomain })),
});
