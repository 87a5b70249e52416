// Which upstream protobuf message carries each built-in kind the embedded server serves (lists
// included). The messages themselves come from the vendored upstream .proto files
// (third_party/kubernetes-proto) through scripts/gen-protobuf.ts, which keeps only the messages
// these reach. Custom resources (cert-manager's kinds, Gateway API) have no message: JSON only,
// as on kube-apiserver.

/** apiVersion + kind → the fully qualified message name */
export const messageNames: Readonly<Record<string, string>> = {
  'v1/Secret': 'k8s.io.api.core.v1.Secret',
  'v1/SecretList': 'k8s.io.api.core.v1.SecretList',
  'v1/Namespace': 'k8s.io.api.core.v1.Namespace',
  'v1/NamespaceList': 'k8s.io.api.core.v1.NamespaceList',
  'v1/Event': 'k8s.io.api.core.v1.Event',
  'v1/EventList': 'k8s.io.api.core.v1.EventList',
  'v1/Pod': 'k8s.io.api.core.v1.Pod',
  'v1/PodList': 'k8s.io.api.core.v1.PodList',
  'v1/Service': 'k8s.io.api.core.v1.Service',
  'v1/ServiceList': 'k8s.io.api.core.v1.ServiceList',
  'v1/Status': 'k8s.io.apimachinery.pkg.apis.meta.v1.Status',
  'coordination.k8s.io/v1/Lease': 'k8s.io.api.coordination.v1.Lease',
  'coordination.k8s.io/v1/LeaseList': 'k8s.io.api.coordination.v1.LeaseList',
  'networking.k8s.io/v1/Ingress': 'k8s.io.api.networking.v1.Ingress',
  'networking.k8s.io/v1/IngressList': 'k8s.io.api.networking.v1.IngressList',
  'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration': 'k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/v1/ValidatingWebhookConfigurationList': 'k8s.io.api.admissionregistration.v1.ValidatingWebhookConfigurationList',
  'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration': 'k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/v1/MutatingWebhookConfigurationList': 'k8s.io.api.admissionregistration.v1.MutatingWebhookConfigurationList',
  'authorization.k8s.io/v1/SelfSubjectAccessReview': 'k8s.io.api.authorization.v1.SelfSubjectAccessReview',
  'authorization.k8s.io/v1/SelfSubjectRulesReview': 'k8s.io.api.authorization.v1.SelfSubjectRulesReview',
  'authentication.k8s.io/v1/SelfSubjectReview': 'k8s.io.api.authentication.v1.SelfSubjectReview',
};

/** The envelope every protobuf body is wrapped in. */
export const envelopeMessageName = 'k8s.io.apimachinery.pkg.runtime.Unknown';

/**
 * Fields of Go structs embedded with `json:",inline"` (upstream types.go): on the wire they are
 * a nested message, in JSON their fields sit in the enclosing object. The .proto files do not
 * say so, so they are listed here, as "message.field", for the messages the kinds above reach
 * (kubernetes-messages.test.ts checks each is still in the descriptor).
 */
export const inlineFields: ReadonlySet<string> = new Set([
  'k8s.io.api.core.v1.Volume.volumeSource',
  'k8s.io.api.core.v1.Probe.handler',
  'k8s.io.api.core.v1.EphemeralContainer.ephemeralContainerCommon',
  'k8s.io.api.core.v1.ConfigMapEnvSource.localObjectReference',
  'k8s.io.api.core.v1.ConfigMapKeySelector.localObjectReference',
  'k8s.io.api.core.v1.ConfigMapProjection.localObjectReference',
  'k8s.io.api.core.v1.ConfigMapVolumeSource.localObjectReference',
  'k8s.io.api.core.v1.SecretEnvSource.localObjectReference',
  'k8s.io.api.core.v1.SecretKeySelector.localObjectReference',
  'k8s.io.api.core.v1.SecretProjection.localObjectReference',
  'k8s.io.api.networking.v1.IngressRule.ingressRuleValue',
  'k8s.io.api.admissionregistration.v1.RuleWithOperations.rule',
]);
