// Package nacoswire is the Nacos 2.x wire format as nacos-sdk-go v2 and the
// Java client 2.x speak it, without a gRPC or protobuf library:
//
//   - gRPC framing (frame.go): each message on an HTTP/2 stream is one byte
//     of compression flag (always 0 here: Nacos clients never compress)
//     and a 4-byte big-endian length, then the message.
//
//   - The one protobuf message Nacos defines (payload.go), from
//     nacos_grpc_service.proto in alibaba/nacos (api/src/main/proto):
//
//     message Metadata { string type = 3; string clientIp = 8; map<string,string> headers = 7; }
//     message Payload  { Metadata metadata = 2; google.protobuf.Any body = 3; }
//
//     Any is { string type_url = 1; bytes value = 2; }; Nacos leaves
//     type_url empty and puts JSON in value.
//
//   - The JSON bodies (messages.go): Metadata.type names a request or
//     response class (com.alibaba.nacos.api.naming.remote.request.
//     InstanceRequest and its siblings, Go's rpc_request and rpc_response
//     packages) whose fields are the body's JSON object.
//
// The services are Request (unary, path /Request/request) and
// BiRequestStream (bidirectional, /BiRequestStream/requestBiStream); the
// server pushes its own requests (NotifySubscriberRequest,
// ConfigChangeNotifyRequest) on the second and reads the client's answers
// there.
//
// Every decoder bounds what it reads: a message longer than its limit, a
// payload with more than MaxHeaders headers or a field past its limit is an
// error before anything of that size is allocated, so bytes from the
// network never cost more than the limit (checked by the fuzz targets).
package nacoswire
