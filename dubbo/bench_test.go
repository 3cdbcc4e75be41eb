package dubbo

import (
	"net/url"
	"testing"
)

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(provider); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseEncoded(b *testing.B) {
	enc := url.QueryEscape(provider)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(enc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	sub := MustParse("consumer://10.0.0.9/com.foo.BarService?application=app&category=providers,configurators,routers&check=false&group=a,b&side=consumer&version=1.0.0")
	reg := MustParse(provider + "&group=b")
	b.ReportAllocs()
	for b.Loop() {
		if !Match(sub, reg) {
			b.Fatal("no match")
		}
	}
}
