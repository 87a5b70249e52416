// Kubernetes protobuf message definitions for the built-in kinds the embedded server stores,
// in .proto syntax for protobufjs to parse: the wire format is then protobufjs's work, never ours.
//
// A SUBSET, written for certsmith from the public wire specification, i.e. the message and
// field names and numbers that the upstream definitions publish (no npm package ships them):
//   k8s.io/apimachinery  pkg/runtime/generated.proto          (Unknown, TypeMeta)
//   k8s.io/apimachinery  pkg/apis/meta/v1/generated.proto     (ObjectMeta, ListMeta, Status, Time, ...)
//   k8s.io/api           core/v1/generated.proto              (Secret, Namespace, Event)
//   k8s.io/api           coordination/v1/generated.proto      (Lease)
//   k8s.io/api           authorization/v1/generated.proto     (SelfSubjectAccessReview, SelfSubjectRulesReview)
// Every field of these messages is listed, so an object survives a round trip; messages the
// server does not store (Pod, Service, ConfigMap, ...) are left out. Field numbers must stay
// exactly the upstream ones: they are the wire contract with kubectl and client-go.
// Packages are kept as upstream names them so that type names match what Go clients expect.

export const runtimeProto = `
syntax = "proto2";
package k8s.io.apimachinery.pkg.runtime;

message TypeMeta {
  optional string apiVersion = 1;
  optional string kind = 2;
}

message Unknown {
  optional TypeMeta typeMeta = 1;
  optional bytes raw = 2;
  optional string contentEncoding = 3;
  optional string contentType = 4;
}
`;

export const metaV1Proto = `
syntax = "proto2";
package k8s.io.apimachinery.pkg.apis.meta.v1;

message Time {
  optional int64 seconds = 1;
  optional int32 nanos = 2;
}

message MicroTime {
  optional int64 seconds = 1;
  optional int32 nanos = 2;
}

message FieldsV1 {
  optional bytes Raw = 1;
}

message ManagedFieldsEntry {
  optional string manager = 1;
  optional string operation = 2;
  optional string apiVersion = 3;
  optional Time time = 4;
  optional string fieldsType = 6;
  optional FieldsV1 fieldsV1 = 7;
  optional string subresource = 8;
}

message OwnerReference {
  optional string kind = 1;
  optional string name = 3;
  optional string uid = 4;
  optional string apiVersion = 5;
  optional bool controller = 6;
  optional bool blockOwnerDeletion = 7;
}

message ObjectMeta {
  optional string name = 1;
  optional string generateName = 2;
  optional string namespace = 3;
  optional string selfLink = 4;
  optional string uid = 5;
  optional string resourceVersion = 6;
  optional int64 generation = 7;
  optional Time creationTimestamp = 8;
  optional Time deletionTimestamp = 9;
  optional int64 deletionGracePeriodSeconds = 10;
  map<string, string> labels = 11;
  map<string, string> annotations = 12;
  repeated OwnerReference ownerReferences = 13;
  repeated string finalizers = 14;
  repeated ManagedFieldsEntry managedFields = 17;
}

message ListMeta {
  optional string selfLink = 1;
  optional string resourceVersion = 2;
  optional string continue = 3;
  optional int64 remainingItemCount = 4;
}

message StatusCause {
  optional string reason = 1;
  optional string message = 2;
  optional string field = 3;
}

message StatusDetails {
  optional string name = 1;
  optional string group = 2;
  optional string kind = 3;
  repeated StatusCause causes = 4;
  optional int32 retryAfterSeconds = 5;
  optional string uid = 6;
}

message Status {
  optional ListMeta metadata = 1;
  optional string status = 2;
  optional string message = 3;
  optional string reason = 4;
  optional StatusDetails details = 5;
  optional int32 code = 6;
}

message LabelSelectorRequirement {
  optional string key = 1;
  optional string operator = 2;
  repeated string values = 3;
}

message FieldSelectorRequirement {
  optional string key = 1;
  optional string operator = 2;
  repeated string values = 3;
}
`;

export const coreV1Proto = `
syntax = "proto2";
package k8s.io.api.core.v1;

message ObjectReference {
  optional string kind = 1;
  optional string namespace = 2;
  optional string name = 3;
  optional string uid = 4;
  optional string apiVersion = 5;
  optional string resourceVersion = 6;
  optional string fieldPath = 7;
}

message Secret {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  map<string, bytes> data = 2;
  optional string type = 3;
  map<string, string> stringData = 4;
  optional bool immutable = 5;
}

message SecretList {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta metadata = 1;
  repeated Secret items = 2;
}

message NamespaceSpec {
  repeated string finalizers = 1;
}

message NamespaceCondition {
  optional string type = 1;
  optional string status = 2;
  optional k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 4;
  optional string reason = 5;
  optional string message = 6;
}

message NamespaceStatus {
  optional string phase = 1;
  repeated NamespaceCondition conditions = 2;
}

message Namespace {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional NamespaceSpec spec = 2;
  optional NamespaceStatus status = 3;
}

message NamespaceList {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta metadata = 1;
  repeated Namespace items = 2;
}

message EventSource {
  optional string component = 1;
  optional string host = 2;
}

message EventSeries {
  optional int32 count = 1;
  optional k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime lastObservedTime = 2;
}

message Event {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional ObjectReference involvedObject = 2;
  optional string reason = 3;
  optional string message = 4;
  optional EventSource source = 5;
  optional k8s.io.apimachinery.pkg.apis.meta.v1.Time firstTimestamp = 6;
  optional k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTimestamp = 7;
  optional int32 count = 8;
  optional string type = 9;
  optional k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime eventTime = 10;
  optional EventSeries series = 11;
  optional string action = 12;
  optional ObjectReference related = 13;
  optional string reportingComponent = 14;
  optional string reportingInstance = 15;
}

message EventList {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta metadata = 1;
  repeated Event items = 2;
}
`;

export const coordinationV1Proto = `
syntax = "proto2";
package k8s.io.api.coordination.v1;

message LeaseSpec {
  optional string holderIdentity = 1;
  optional int32 leaseDurationSeconds = 2;
  optional k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime acquireTime = 3;
  optional k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime renewTime = 4;
  optional int32 leaseTransitions = 5;
  optional string strategy = 6;
  optional string preferredHolder = 7;
}

message Lease {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional LeaseSpec spec = 2;
}

message LeaseList {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta metadata = 1;
  repeated Lease items = 2;
}
`;

export const authorizationV1Proto = `
syntax = "proto2";
package k8s.io.api.authorization.v1;

message FieldSelectorAttributes {
  optional string rawSelector = 1;
  repeated k8s.io.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement requirements = 2;
}

message LabelSelectorAttributes {
  optional string rawSelector = 1;
  repeated k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement requirements = 2;
}

message ResourceAttributes {
  optional string namespace = 1;
  optional string verb = 2;
  optional string group = 3;
  optional string version = 4;
  optional string resource = 5;
  optional string subresource = 6;
  optional string name = 7;
  optional FieldSelectorAttributes fieldSelector = 8;
  optional LabelSelectorAttributes labelSelector = 9;
}

message NonResourceAttributes {
  optional string path = 1;
  optional string verb = 2;
}

message SelfSubjectAccessReviewSpec {
  optional ResourceAttributes resourceAttributes = 1;
  optional NonResourceAttributes nonResourceAttributes = 2;
}

message SubjectAccessReviewStatus {
  optional bool allowed = 1;
  optional string reason = 2;
  optional string evaluationError = 3;
  optional bool denied = 4;
}

message SelfSubjectAccessReview {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional SelfSubjectAccessReviewSpec spec = 2;
  optional SubjectAccessReviewStatus status = 3;
}

message SelfSubjectRulesReviewSpec {
  optional string namespace = 1;
}

message ResourceRule {
  repeated string verbs = 1;
  repeated string apiGroups = 2;
  repeated string resources = 3;
  repeated string resourceNames = 4;
}

message NonResourceRule {
  repeated string verbs = 1;
  repeated string nonResourceURLs = 2;
}

message SubjectRulesReviewStatus {
  repeated ResourceRule resourceRules = 1;
  repeated NonResourceRule nonResourceRules = 2;
  optional bool incomplete = 3;
  optional string evaluationError = 4;
}

message SelfSubjectRulesReview {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional SelfSubjectRulesReviewSpec spec = 2;
  optional SubjectRulesReviewStatus status = 3;
}
`;

/** apiVersion + kind → the message that carries it (lists included) */
export const messageNames: Record<string, string> = {
  'v1/Secret': 'k8s.io.api.core.v1.Secret',
  'v1/SecretList': 'k8s.io.api.core.v1.SecretList',
  'v1/Namespace': 'k8s.io.api.core.v1.Namespace',
  'v1/NamespaceList': 'k8s.io.api.core.v1.NamespaceList',
  'v1/Event': 'k8s.io.api.core.v1.Event',
  'v1/EventList': 'k8s.io.api.core.v1.EventList',
  'v1/Status': 'k8s.io.apimachinery.pkg.apis.meta.v1.Status',
  'coordination.k8s.io/v1/Lease': 'k8s.io.api.coordination.v1.Lease',
  'coordination.k8s.io/v1/LeaseList': 'k8s.io.api.coordination.v1.LeaseList',
  'authorization.k8s.io/v1/SelfSubjectAccessReview': 'k8s.io.api.authorization.v1.SelfSubjectAccessReview',
  'authorization.k8s.io/v1/SelfSubjectRulesReview': 'k8s.io.api.authorization.v1.SelfSubjectRulesReview',
};
