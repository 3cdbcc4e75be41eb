// Package nacos tests namecast's Nacos door with the real Nacos Go client,
// github.com/nacos-group/nacos-sdk-go/v2 at v2.2.2 (the version dubbo-go
// v3.3 uses), against agents started in this process. It is its own module
// so that the client and its gRPC and protobuf dependencies stay out of the
// agent's module.
//
// The golden frames of package nacoswire are checked here against the
// client's own generated protobuf code, so the hand-written encoder is
// compared with Nacos' encoding, not with itself.
package nacos
