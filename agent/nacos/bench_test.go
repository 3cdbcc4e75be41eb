package nacos

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/routes"
)

// BenchmarkServiceQuery1000 is the door's side of a query for a service of
// 1,000 Dubbo providers: the URLs read back as instances and the answer
// encoded (the client's decode and the transport are not in it).
func BenchmarkServiceQuery1000(b *testing.B) {
	reg := hosttest.New(routes.NewTable("local", 1))
	s, err := NewServer(Config{Addr: "127.0.0.1:0", Host: reg})
	if err != nil {
		b.Fatal(err)
	}
	sv, _ := newService("", "", "providers:bench.Api:1.0.0:")
	var recs []routes.Record
	for i := range 1000 {
		rec, err := sv.record(dubboInst(fmt.Sprintf("10.1.%d.%d", i/250, i%250), 20880), false)
		if err != nil {
			b.Fatal(err)
		}
		recs = append(recs, rec)
	}
	reg.Apply(recs, nil)
	b.ReportAllocs()
	for b.Loop() {
		info := s.serviceInfo(sv, "")
		if len(info.Hosts) != 1000 {
			b.Fatalf("%d hosts", len(info.Hosts))
		}
		if _, err := json.Marshal(info); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckKind1000 is the kind check of one ephemeral registration
// into a service of 1,000 ephemeral Dubbo providers (naming.go
// checkKind, under writeMu).
func BenchmarkCheckKind1000(b *testing.B) {
	reg := hosttest.New(routes.NewTable("local", 1))
	s, err := NewServer(Config{Addr: "127.0.0.1:0", Host: reg})
	if err != nil {
		b.Fatal(err)
	}
	sv, _ := newService("", "", "providers:bench.Api:1.0.0:")
	var recs []routes.Record
	for i := range 1000 {
		rec, err := sv.record(dubboInst(fmt.Sprintf("10.1.%d.%d", i/250, i%250), 20880), false)
		if err != nil {
			b.Fatal(err)
		}
		recs = append(recs, rec)
	}
	reg.Apply(recs, nil)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.checkKind(sv, false, false); err != nil {
			b.Fatal(err)
		}
	}
}
