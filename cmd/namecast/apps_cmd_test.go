package main

import (
	"strings"
	"testing"
)

func TestApps(t *testing.T) {
	f := newFakeAgent(t)
	f.on("GET /v1/apps", 200, `{"apps":[{"name":"greeter","instances":2,"interfaces":["org.demo.Greeter","org.demo.Other"]},{"name":"idle","instances":0,"interfaces":[]}]}`)
	f.on("GET /v1/apps/greeter", 200, `{"name":"greeter","interfaces":["org.demo.Greeter"],"instances":[`+
		`{"app":"greeter","id":"10.0.0.1:20000","address":"10.0.0.1","port":20000,"revision":"r1","agent":"a1"},`+
		`{"app":"greeter","id":"10.0.0.2:20000","address":"10.0.0.2","port":20000,"agent":"a2"}]}`)
	out := ok(t, "apps", "--http", f.addr())
	for _, want := range []string{"APP", "greeter", "2", "org.demo.Greeter,org.demo.Other", "idle"} {
		if !strings.Contains(out, want) {
			t.Errorf("apps printed %q, missing %q", out, want)
		}
	}
	out = ok(t, "apps", "greeter", "--http", f.addr())
	for _, want := range []string{"10.0.0.1:20000", "r1", "a1", "10.0.0.2:20000", "interfaces: org.demo.Greeter"} {
		if !strings.Contains(out, want) {
			t.Errorf("apps greeter printed %q, missing %q", out, want)
		}
	}
	if r := run(t, "", "apps", "nobody", "--http", f.addr()); r.code != 1 {
		t.Errorf("an unknown application: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := run(t, "", "apps", "a", "b", "--http", f.addr()); r.code != 2 {
		t.Errorf("two applications: exit %d", r.code)
	}
	assertJSON(t, ok(t, "apps", "--json", "--http", f.addr()), `{"apps":[{"name":"greeter","instances":2,"interfaces":["org.demo.Greeter","org.demo.Other"]},{"name":"idle","instances":0,"interfaces":[]}]}`)
}

func TestRegisterInstance(t *testing.T) {
	f := newFakeAgent(t)
	f.on("PUT /v1/apps/greeter/instances", 200, `{"app":"greeter","id":"10.0.0.5:20880","address":"10.0.0.5","port":20880,"revision":"r1","agent":"a1"}`)
	f.on("DELETE /v1/apps/greeter/instances/10.0.0.5:20880", 200, `{"deleted":true}`)
	out := ok(t, "register", "instance", "greeter", "10.0.0.5:20880", "--interface", "com.foo.Bar", "--interface", "com.foo.Baz",
		"--meta", "k=v", "--ttl", "30s", "--http", f.addr())
	if !strings.Contains(out, "registered instance 10.0.0.5:20880 of greeter (revision r1), unless renewed within 30s") {
		t.Errorf("register instance printed %q", out)
	}
	body := f.last(t).body
	for _, want := range []string{`"address":"10.0.0.5"`, `"port":20880`, `"interfaces":["com.foo.Bar","com.foo.Baz"]`, `"metadata":{"k":"v"}`, `"ttl":"30s"`} {
		if !strings.Contains(body, want) {
			t.Errorf("body %s lacks %s", body, want)
		}
	}
	if r := run(t, "", "register", "instance", "greeter", "no-port", "--http", f.addr()); r.code != 2 {
		t.Errorf("HOST:PORT without a port: exit %d", r.code)
	}
	if out := ok(t, "unregister", "instance", "greeter", "10.0.0.5:20880", "--http", f.addr()); !strings.Contains(out, "unregistered instance 10.0.0.5:20880 of greeter") {
		t.Errorf("unregister instance printed %q", out)
	}
}
