package kubernetes

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const manifests = "../../contrib/kubernetes/namecast.yaml"

// obj is one parsed manifest; get walks it by keys and list indexes.
type obj = map[string]any

func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func load(t *testing.T) map[string]obj {
	t.Helper()
	b, err := os.ReadFile(manifests)
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]obj{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var o obj
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", manifests, err)
		}
		kind, _ := o["kind"].(string)
		if _, dup := byKind[kind]; dup {
			t.Fatalf("%s: two %s", manifests, kind)
		}
		byKind[kind] = o
	}
	return byKind
}

// agentFlags are the flags `namecast agent --help` lists.
func agentFlags(t *testing.T) map[string]bool {
	t.Helper()
	cmd := exec.Command("go", "run", "./cmd/namecast", "agent", "--help")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("namecast agent --help: %v", err)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  --([a-z-]+)`).FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	return flags
}

// The DaemonSet is what docs/kubernetes.md says: on the host's network
// with every door's port, the gossip key from a Secret mounted as a file
// (never on the command line), readiness on /v1/health of the read-only
// metrics listener, a preStop that leaves and a grace period that lets it,
// a non-root user; the headless Service selects it for --retry-join.
func TestManifests(t *testing.T) {
	m := load(t)
	ds, svc := m["DaemonSet"], m["Service"]
	if ds == nil || svc == nil {
		t.Fatalf("%s: want a DaemonSet and a Service, have %v", manifests, slices.Collect(maps.Keys(m)))
	}
	pod := get(ds, "spec", "template", "spec")
	if get(pod, "hostNetwork") != true {
		t.Error("DaemonSet: hostNetwork is not true")
	}
	if get(pod, "dnsPolicy") != "ClusterFirstWithHostNet" {
		t.Error("DaemonSet: dnsPolicy must be ClusterFirstWithHostNet to resolve the Service from the host network")
	}
	if g, _ := get(pod, "terminationGracePeriodSeconds").(int); g < 15 {
		t.Errorf("DaemonSet: terminationGracePeriodSeconds %d; the preStop leave needs up to 5 s and room", g)
	}
	if get(pod, "securityContext", "runAsNonRoot") != true || get(pod, "securityContext", "runAsUser") == 0 {
		t.Error("DaemonSet: the agent must run as a non-root user")
	}
	labels, _ := get(ds, "spec", "template", "metadata", "labels").(map[string]any)
	for k, v := range get(svc, "spec", "selector").(map[string]any) {
		if labels[k] != v {
			t.Errorf("Service selector %s=%v does not select the DaemonSet's pods (%v)", k, v, labels)
		}
	}
	if get(svc, "spec", "clusterIP") != "None" || get(svc, "spec", "publishNotReadyAddresses") != true {
		t.Error("Service: must be headless (clusterIP: None) and publish not-ready agents, for --retry-join")
	}

	c := get(pod, "containers", 0)
	var args []string
	for _, a := range get(c, "args").([]any) {
		args = append(args, a.(string))
	}
	if args[0] != "agent" {
		t.Fatalf("args %q: want agent first", args)
	}
	known := agentFlags(t)
	flags := map[string]string{}
	for _, a := range args[1:] {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !known[name] {
			t.Errorf("args: %s is not a namecast agent flag", a)
		}
		flags[name] = value
	}
	if _, ok := flags["encrypt"]; ok {
		t.Error("args: --encrypt puts the gossip key on the command line; use --encrypt-file")
	}
	svcName := get(svc, "metadata", "name").(string) + "." + get(svc, "metadata", "namespace").(string) + ".svc.cluster.local:7946"
	for name, want := range map[string]string{"retry-join": svcName, "data-dir": "/var/lib/namecast",
		"encrypt-file": "/etc/namecast/gossip.key", "metrics": "$(HOST_IP):7948"} {
		if flags[name] != want {
			t.Errorf("args: --%s=%q, want %q", name, flags[name], want)
		}
	}

	ports := map[string]bool{}
	for _, p := range get(c, "ports").([]any) {
		ports[strings.ToUpper(str(get(p, "protocol"), "TCP"))+"/"+str(get(p, "containerPort"), "")] = true
	}
	for _, want := range []string{"TCP/7946", "UDP/7946", "TCP/7948", "TCP/9876", "TCP/2181", "TCP/8848", "TCP/9848"} {
		if !ports[want] {
			t.Errorf("container ports lack %s (have %v)", want, ports)
		}
	}
	if get(c, "readinessProbe", "httpGet", "path") != "/v1/health" || get(c, "readinessProbe", "httpGet", "port") != 7948 {
		t.Error("readinessProbe: want GET /v1/health on the metrics listener (7948)")
	}
	if cmd, _ := get(c, "lifecycle", "preStop", "exec", "command").([]any); len(cmd) != 2 || cmd[1] != "leave" {
		t.Errorf("preStop %v: want [/usr/bin/namecast leave]", cmd)
	}

	mounts := map[string]string{}
	for _, vm := range get(c, "volumeMounts").([]any) {
		mounts[get(vm, "name").(string)] = get(vm, "mountPath").(string)
	}
	var keyVolume any
	for _, v := range get(pod, "volumes").([]any) {
		if mounts[get(v, "name").(string)] == "/etc/namecast" {
			keyVolume = v
		}
	}
	if get(keyVolume, "secret", "secretName") == nil {
		t.Error("the gossip key (/etc/namecast) is not mounted from a Secret")
	}
	if mode, _ := get(keyVolume, "secret", "defaultMode").(int); mode&0o007 != 0 || mode == 0 {
		t.Errorf("the key Secret's defaultMode %#o lets others read it; --encrypt-file refuses that", mode)
	}

	version, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if img := get(c, "image"); img != "namecast:"+strings.TrimSpace(string(version)) {
		t.Errorf("image %v: want namecast:%s (the VERSION file; docs/kubernetes.md builds it)", img, strings.TrimSpace(string(version)))
	}
}

func str(v any, def string) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	}
	return def
}
