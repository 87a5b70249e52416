// The OpenAPI v2 document's protobuf messages, in .proto syntax for protobufjs: what
// `GET /openapi/v2` answers to `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`
// (kubectl before 1.27 validates and explains only with it; later ones fall back to it).
//
// A SUBSET, written for certsmith from the public wire specification (message and field names
// and numbers) of gnostic's openapiv2/OpenAPIv2.proto (package openapi.v2), which is what
// client-go decodes the document with. Only what a Swagger 2.0 document of schema definitions
// needs is listed; the field numbers must stay gnostic's.
export const openAPIV2Proto = `
syntax = "proto3";
package openapi.v2;

message Any {
  string yaml = 2;
}

message NamedAny {
  string name = 1;
  Any value = 2;
}

message Info {
  string title = 1;
  string version = 2;
  string description = 3;
}

message TypeItem {
  repeated string value = 1;
}

message NamedSchema {
  string name = 1;
  Schema value = 2;
}

message Properties {
  repeated NamedSchema additional_properties = 1;
}

message ItemsItem {
  repeated Schema schema = 1;
}

message AdditionalPropertiesItem {
  oneof oneof {
    Schema schema = 1;
    bool boolean = 2;
  }
}

message Schema {
  string _ref = 1;
  string format = 2;
  string title = 3;
  string description = 4;
  Any default = 5;
  double multiple_of = 6;
  double maximum = 7;
  bool exclusive_maximum = 8;
  double minimum = 9;
  bool exclusive_minimum = 10;
  int64 max_length = 11;
  int64 min_length = 12;
  string pattern = 13;
  int64 max_items = 14;
  int64 min_items = 15;
  bool unique_items = 16;
  int64 max_properties = 17;
  int64 min_properties = 18;
  repeated string required = 19;
  repeated Any enum = 20;
  AdditionalPropertiesItem additional_properties = 21;
  TypeItem type = 22;
  ItemsItem items = 23;
  repeated Schema all_of = 24;
  Properties properties = 25;
  bool read_only = 27;
  Any example = 30;
  repeated NamedAny vendor_extension = 31;
}

message Definitions {
  repeated NamedSchema additional_properties = 1;
}

message Document {
  string swagger = 1;
  Info info = 2;
  Definitions definitions = 9;
}
`;
