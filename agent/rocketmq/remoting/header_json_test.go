package remoting

import (
	"reflect"
	"testing"
)

func TestDecodeJSONHeaderTolerance(t *testing.T) {
	cases := []struct {
		name   string
		header string
		want   Command
		fast   bool // the shape real peers send, which must not need reflection
	}{
		{"go client", goRouteRequestHeader, *goRouteCommand(SerializeJSON), true},
		{"java broker", javaRegisterHeader, Command{Code: RegisterBroker, Version: 479, Opaque: 3, ExtFields: map[string]string{
			"brokerAddr": "10.0.0.1:10911", "brokerId": "0", "brokerName": "broker-a", "bodyCrc32": "1712345678",
			"clusterName": "DefaultCluster", "compressed": "false", "enableActingMaster": "false", "haServerAddr": "10.0.0.1:10912",
		}}, true},
		{"java response", `{"code":0,"flag":1,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":479}`,
			Command{Flag: 1, Opaque: 7, Version: 479}, true},
		{"pretty", "\n{ \"code\" : 105 ,\n\t\"opaque\" : -3 ,\"extFields\" : { \"topic\" : \"T\" } }\r\n",
			Command{Code: 105, Opaque: -3, ExtFields: map[string]string{"topic": "T"}}, true},
		{"empty object", `{}`, Command{}, true},
		{"nulls", `{"code":1,"remark":null,"extFields":null,"language":null}`, Command{Code: 1}, false},
		{"language number", `{"language":9}`, Command{Language: LanguageGo}, true},
		{"language unknown name", `{"language":"KOTLIN"}`, Command{Language: LanguageOther}, true},
		{"language out of range", `{"language":300}`, Command{Language: LanguageOther}, true},
		{"language float", `{"language":9.5}`, Command{Language: LanguageOther}, false},
		{"unknown keys", `{"code":2,"extra":{"nested":[1,{"a":null}]},"serializeTypeCurrentRPC":"ROCKETMQ","other":true}`, Command{Code: 2}, false},
		{"fastjson bare keys in an unknown field", `{"code":3,"x":{0:"a",1:"b"}}`, Command{Code: 3}, false},
		{"sloppy ext values", `{"extFields":{"brokerId":0,"compressed":false,"bodyCrc32":-12,"big":1e3,"gone":null,"obj":{ "a" : [1, 2] },"esc":"\u0041\n"}}`,
			Command{ExtFields: map[string]string{"brokerId": "0", "compressed": "false", "bodyCrc32": "-12", "big": "1e3", "obj": `{"a":[1,2]}`, "esc": "A\n"}}, false},
		{"remark number", `{"remark":12}`, Command{Remark: "12"}, false},
		{"escaped key", `{"c\u006fde":5}`, Command{Code: 5}, false},
		{"case-insensitive key", `{"CODE":5}`, Command{Code: 5}, false},
		{"invalid UTF-8 in ext", "{\"extFields\":{\"k\":\"a\xffb\"}}", Command{ExtFields: map[string]string{"k": "a\uFFFDb"}}, false},
		{"non-ASCII ext", `{"extFields":{"topic":"主题"}}`, Command{ExtFields: map[string]string{"topic": "主题"}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got Command
			if err := decodeJSONHeader([]byte(tc.header), &got); err != nil {
				t.Fatal(err)
			}
			if !sameCommand(&got, &tc.want) {
				t.Errorf("got  %v\nwant %v", &got, &tc.want)
			}
			var fast Command
			if ok := decodeJSONHeaderFast([]byte(tc.header), &fast); ok != tc.fast {
				t.Errorf("fast path taken = %v, want %v", ok, tc.fast)
			}
			var slow Command
			if err := decodeJSONHeaderSlow([]byte(tc.header), &slow); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, slow) {
				t.Errorf("fast and reference readings differ:\nfast %v\nslow %v", &got, &slow)
			}
		})
	}
}

// What the fast path must refuse, so that encoding/json decides.
func TestDecodeJSONHeaderFastDefers(t *testing.T) {
	for _, h := range []string{
		`{"code":1,"code":2}`,
		`{"extFields":{"a":"1"},"extFields":{"b":"2"}}`,
		`{"code":01}`, `{"code":1.0}`, `{"code":1e2}`, `{"code":-}`, `{"code":12345678901234567890}`,
		`{"opaque":2147483648}`, `{"flag":-2147483649}`,
		`{"remark":"a\"b"}`, "{\"remark\":\"tab\there\"}",
		`{"code":1,}`, `{"code":1`, `{"code":1}x`, `{code:1}`, `[]`, ``,
	} {
		var c Command
		if decodeJSONHeaderFast([]byte(h), &c) {
			t.Errorf("fast path accepted %q as %v", h, &c)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	cases := []struct{ in, raw, ascii string }{
		{"plain", `"plain"`, `"plain"`},
		{"q\"b\\s/", `"q\"b\\s/"`, `"q\"b\\s/"`},
		{"\n\r\t\b\f\x00\x1f", `"\n\r\t\b\f\u0000\u001f"`, `"\n\r\t\b\f\u0000\u001f"`},
		{"<&>", `"<&>"`, `"<&>"`},
		{"é主😀", `"é主😀"`, `"\u00e9\u4e3b\ud83d\ude00"`},
		{"bad\xffutf8", "\"bad\uFFFDutf8\"", `"bad\ufffdutf8"`},
	}
	for _, tc := range cases {
		if got := string(appendJSONString(nil, tc.in, false)); got != tc.raw {
			t.Errorf("raw %q = %s, want %s", tc.in, got, tc.raw)
		}
		if got := string(appendJSONString(nil, tc.in, true)); got != tc.ascii {
			t.Errorf("ascii %q = %s, want %s", tc.in, got, tc.ascii)
		}
	}
}
