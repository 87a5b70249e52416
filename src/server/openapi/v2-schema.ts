// The OpenAPI v2 document's protobuf messages, in .proto syntax for protobufjs: what
// `GET /openapi/v2` answers to `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`
// (kubectl before 1.27 validates and explains only with it; later ones fall back to it).
//
// A SUBSET, written for certsmith from the public wire specification (message and field names
// and numbers) of gnostic's openapiv2/OpenAPIv2.proto (package openapi.v2), which is what
// client-go decodes the document with. Only what certsmith's Swagger 2.0 document uses (schema
// definitions; paths whose operations take body, query and path parameters and answer a schema
// per status code) is listed; the field numbers must stay gnostic's.
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

message JsonReference {
  string _ref = 1;
  string description = 2;
}

message BodyParameter {
  string description = 1;
  string name = 2;
  string in = 3;
  bool required = 4;
  Schema schema = 5;
  repeated NamedAny vendor_extension = 6;
}

message QueryParameterSubSchema {
  bool required = 1;
  string in = 2;
  string description = 3;
  string name = 4;
  bool allow_empty_value = 5;
  string type = 6;
  string format = 7;
  bool unique_items = 20;
  repeated NamedAny vendor_extension = 23;
}

message PathParameterSubSchema {
  bool required = 1;
  string in = 2;
  string description = 3;
  string name = 4;
  string type = 5;
  string format = 6;
  bool unique_items = 19;
  repeated NamedAny vendor_extension = 22;
}

message NonBodyParameter {
  oneof oneof {
    QueryParameterSubSchema query_parameter_sub_schema = 3;
    PathParameterSubSchema path_parameter_sub_schema = 4;
  }
}

message Parameter {
  oneof oneof {
    BodyParameter body_parameter = 1;
    NonBodyParameter non_body_parameter = 2;
  }
}

message ParametersItem {
  oneof oneof {
    Parameter parameter = 1;
    JsonReference json_reference = 2;
  }
}

message SchemaItem {
  oneof oneof {
    Schema schema = 1;
  }
}

message Response {
  string description = 1;
  SchemaItem schema = 2;
  repeated NamedAny vendor_extension = 5;
}

message ResponseValue {
  oneof oneof {
    Response response = 1;
    JsonReference json_reference = 2;
  }
}

message NamedResponseValue {
  string name = 1;
  ResponseValue value = 2;
}

message Responses {
  repeated NamedResponseValue response_code = 1;
  repeated NamedAny vendor_extension = 2;
}

message Operation {
  repeated string tags = 1;
  string summary = 2;
  string description = 3;
  string operation_id = 5;
  repeated string produces = 6;
  repeated string consumes = 7;
  repeated ParametersItem parameters = 8;
  Responses responses = 9;
  repeated string schemes = 10;
  bool deprecated = 11;
  repeated NamedAny vendor_extension = 13;
}

message PathItem {
  string _ref = 1;
  Operation get = 2;
  Operation put = 3;
  Operation post = 4;
  Operation delete = 5;
  Operation options = 6;
  Operation head = 7;
  Operation patch = 8;
  repeated ParametersItem parameters = 9;
  repeated NamedAny vendor_extension = 10;
}

message NamedPathItem {
  string name = 1;
  PathItem value = 2;
}

message Paths {
  repeated NamedAny vendor_extension = 1;
  repeated NamedPathItem path = 2;
}

message Document {
  string swagger = 1;
  Info info = 2;
  repeated string consumes = 6;
  repeated string produces = 7;
  Paths paths = 8;
  Definitions definitions = 9;
  repeated NamedAny vendor_extension = 16;
}
`;
