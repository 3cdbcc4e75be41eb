package zookeeper_test

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// runDoorScript is the differential sequence of issue 25's ZooKeeper
// differences: what /zookeeper and / accept, how reads of invalid paths
// answer, Dubbo URL leaves as written and seen from another session,
// Dubbo's fault-tolerant re-create and a recursive delete of another
// session's ephemeral node, four-letter words, and a container reaped once
// its last child went. s1 runs on addr1, s2 on addr2: one server for
// ZooKeeper, two agents of one cluster for namecast, so what one session
// wrote is read through another agent.
func runDoorScript(t *testing.T, addr1, addr2 string) *transcript {
	tr := &transcript{}
	s1 := connect(t, addr1, 10*time.Second)
	s2 := connect(t, addr2, 10*time.Second)
	o := owners{s1.SessionID(): "s1", s2.SessionID(): "s2"}
	create := func(s *session, path, data string, flags int32) string {
		p, err := s.Create(path, []byte(data), flags, acl)
		if err != nil {
			return errName(err)
		}
		return "OK " + p
	}
	get := func(s *session, path string) string {
		d, st, err := s.Get(path)
		if err != nil {
			return errName(err)
		}
		return fmt.Sprintf("OK data=%q %s", d, statText(st, o))
	}
	set := func(s *session, path, data string, version int32) string {
		st, err := s.Set(path, []byte(data), version)
		if err != nil {
			return errName(err)
		}
		return "OK " + statText(st, o)
	}
	children := func(s *session, path string) string {
		ch, _, err := s.Children(path)
		if err != nil {
			return errName(err)
		}
		return "OK " + childrenText(ch)
	}

	// The built-in nodes hold an empty buffer, not a null one (Curator's
	// EnsembleTracker throws on a null /zookeeper/config), and
	// /zookeeper/config has the aversion -1 of its ACL set at startup.
	for _, p := range []string{"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
		tr.add("get built-in "+p, builtinText(s1.Get(p)))
	}

	// /zookeeper is a node like any other but for its built-in children,
	// and / takes data.
	tr.add("create /zookeeper/x", create(s1, "/zookeeper/x", "q", 0))
	tr.add("get /zookeeper/x", get(s1, "/zookeeper/x"))
	tr.add("set /zookeeper/x", set(s1, "/zookeeper/x", "r", 0))
	tr.add("children /zookeeper", children(s1, "/zookeeper"))
	tr.add("delete /zookeeper/x", errName(s1.Delete("/zookeeper/x", -1)))
	tr.add("create /zookeeper/quota/nc", create(s1, "/zookeeper/quota/nc", "", 0))
	tr.add("delete /zookeeper/quota/nc", errName(s1.Delete("/zookeeper/quota/nc", -1)))
	tr.add("delete /zookeeper", errName(s1.Delete("/zookeeper", -1)))
	tr.add("delete /zookeeper/quota", errName(s1.Delete("/zookeeper/quota", -1)))
	tr.add("delete /zookeeper/config", errName(s1.Delete("/zookeeper/config", -1)))
	tr.add("set /zookeeper", set(s1, "/zookeeper", "", -1))
	tr.add("set /zookeeper/quota", set(s1, "/zookeeper/quota", "", -1))
	tr.add("set /zookeeper/config", set(s1, "/zookeeper/config", "", -1))
	tr.add("create /zookeeper/config/x", create(s1, "/zookeeper/config/x", "", 0))
	tr.add("create /zookeeper", create(s1, "/zookeeper", "", 0))
	tr.add("set /", set(s1, "/", "r", -1))
	tr.add("get /", get(s1, "/"))
	tr.add("set / version 1", set(s1, "/", "", 1))

	// Paths go-zookeeper refuses to send, sent by hand.
	bad := []string{"rel", "/a//b", "/a/", "/a/./b", "/a/../b"}
	var ops []rawOp
	var names []string
	for _, p := range bad {
		ops = append(ops,
			rawOp{zkwire.OpExists, &zkwire.PathWatch{Path: p}},
			rawOp{zkwire.OpGetData, &zkwire.PathWatch{Path: p, Watch: true}},
			rawOp{zkwire.OpGetChildren2, &zkwire.PathWatch{Path: p}},
			rawOp{zkwire.OpCreate, &zkwire.CreateRequest{Path: p, ACL: []zkwire.ACL{{Perms: 31, Scheme: "world", ID: "anyone"}}}},
			rawOp{zkwire.OpDelete, &zkwire.PathVersion{Path: p, Version: -1}},
			rawOp{zkwire.OpSetData, &zkwire.SetDataRequest{Path: p, Version: -1}})
		for _, op := range []string{"exists", "getData", "getChildren2", "create", "delete", "setData"} {
			names = append(names, fmt.Sprintf("%s %q", op, p))
		}
	}
	for i, code := range rawPathCodes(addr1, ops) {
		tr.add("invalid path: "+names[i], code)
	}

	// A Dubbo URL leaf as Dubbo writes it, parameters in its own order,
	// read by a session on the other server.
	dir := "/dubbo/demo.Api/providers"
	for _, p := range []string{"/dubbo", "/dubbo/demo.Api", dir} {
		s1.Create(p, nil, 0, acl)
	}
	leaf := dir + "/" + url.QueryEscape("dubbo://10.0.0.5:20880/demo.Api?z=1&a=2&side=provider")
	tr.add("s1 create a URL leaf", create(s1, leaf, "10.0.0.5", zk.FlagEphemeral))
	tr.add("s2 sees it", await(s2, leaf, true))
	tr.add("s2 children of providers", children(s2, dir))
	tr.add("s2 get the leaf", get(s2, leaf))
	_, _, leafW, err := s1.GetW(leaf)
	tr.add("s1 getW the leaf", errName(err))

	// Dubbo's fault-tolerant create: NODEEXISTS, then delete and create.
	tr.add("s2 create it again", create(s2, leaf, "10.0.0.6", zk.FlagEphemeral))
	tr.add("s2 delete s1's leaf", errName(s2.Delete(leaf, -1)))
	tr.add("s2 create it", create(s2, leaf, "10.0.0.6", zk.FlagEphemeral))
	tr.add("s1's watch fires", eventText(leafW))
	tr.add("s1 sees s2's", awaitData(s1, leaf, "10.0.0.6"))
	tr.add("s1 get the leaf", get(s1, leaf))
	tr.add("s1 children of providers", children(s1, dir))

	// A recursive delete (kazoo's, Curator's deletingChildrenIfNeeded)
	// through s2 of a tree holding s1's ephemeral node.
	for _, p := range []string{"/nc2", "/nc2/a"} {
		s1.Create(p, nil, 0, acl)
	}
	tr.add("s1 create /nc2/a/e", create(s1, "/nc2/a/e", "", zk.FlagEphemeral))
	tr.add("s2 sees /nc2/a/e", await(s2, "/nc2/a/e", true))
	tr.add("s2 deletes /nc2 recursively", deleteTree(s2, "/nc2"))
	tr.add("s2 /nc2 gone", await(s2, "/nc2", false))
	tr.add("s1 /nc2 gone", await(s1, "/nc2", false))

	// A multi of checks and deletes (a failing one changes nothing), and
	// zkCli's deleteall, which sends its deletes in multi batches, through
	// s2's server of a tree holding s1's ephemeral node.
	for _, p := range []string{"/m", "/m/a", "/m/b"} {
		s1.Create(p, nil, 0, acl)
	}
	tr.add("s1 create /m/a/e", create(s1, "/m/a/e", "", zk.FlagEphemeral))
	tr.add("s2 sees /m/a/e", await(s2, "/m/a/e", true))
	tr.add("s2 multi check /m version 5, delete /m/b", multiText(s2.Multi(
		&zk.CheckVersionRequest{Path: "/m", Version: 5}, &zk.DeleteRequest{Path: "/m/b", Version: -1})))
	tr.add("s2 /m/b kept", await(s2, "/m/b", true))
	tr.add("s2 multi delete /m/b, then /m/b again", multiText(s2.Multi(
		&zk.DeleteRequest{Path: "/m/b", Version: -1}, &zk.DeleteRequest{Path: "/m/b", Version: -1})))
	tr.add("s2 multi delete /m/a/e, /m/a, /m/b, /m", multiText(s2.Multi(
		&zk.DeleteRequest{Path: "/m/a/e", Version: -1}, &zk.DeleteRequest{Path: "/m/a", Version: -1},
		&zk.DeleteRequest{Path: "/m/b", Version: -1}, &zk.CheckVersionRequest{Path: "/m", Version: 0},
		&zk.DeleteRequest{Path: "/m", Version: -1})))
	tr.add("s1 /m gone", await(s1, "/m", false))
	for _, p := range []string{"/zc", "/zc/a"} {
		s1.Create(p, nil, 0, acl)
	}
	tr.add("s1 create /zc/a/e", create(s1, "/zc/a/e", "", zk.FlagEphemeral))
	tr.add("s2 sees /zc/a/e", await(s2, "/zc/a/e", true))
	tr.add("zkCli deleteall /zc through s2's server", zkCli(t, addr2, "deleteall", "/zc"))
	tr.add("s1 /zc gone", await(s1, "/zc", false))

	// Four-letter words.
	_, _, _, err = s1.GetW("/nc2-none")
	s1.Create("/w", nil, 0, acl)
	_, _, _, err = s1.GetW("/w")
	tr.add("s1 getW /w", errName(err))
	for _, w := range []string{"conf", "cons", "envi", "wchs", "dump", "isro", "abcd"} {
		out, err := fourLetter(addr1, w)
		tr.add("four-letter word "+w, errName(err)+" "+wordShape(w, out, addr1, s1.SessionID()))
	}
	s1.Delete("/w", -1)

	// A container goes some time after its last child does (ZooKeeper:
	// znode.container.checkIntervalMs, set to 1 s for the reference).
	p, err := s1.CreateContainer("/ctr", nil, zk.FlagContainer, acl)
	tr.add("createContainer /ctr", errName(err)+" "+p)
	tr.add("create /ctr/c", create(s1, "/ctr/c", "", 0))
	tr.add("delete /ctr/c", errName(s1.Delete("/ctr/c", -1)))
	tr.add("/ctr reaped", awaitWithin(s1, "/ctr", false, 60*time.Second))
	tr.add("final children /", children(s1, "/"))
	return tr
}

// await polls until path exists (or not) as seen by s, for up to 10 s:
// across agents a change arrives by gossip.
func await(s *session, path string, exists bool) string {
	return awaitWithin(s, path, exists, 10*time.Second)
}

func awaitWithin(s *session, path string, exists bool, within time.Duration) string {
	deadline := time.Now().Add(within)
	for {
		ok, _, err := s.Exists(path)
		if err == nil && ok == exists {
			return fmt.Sprintf("OK exists=%t", ok)
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("%s exists=%t after %v", errName(err), ok, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func awaitData(s *session, path, data string) string {
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, _, err := s.Get(path)
		if err == nil && string(d) == data {
			return "OK"
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("%s data=%q after 10s", errName(err), d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// deleteTree deletes path and everything below it, children first, as
// kazoo's delete(recursive=True) and Curator's deletingChildrenIfNeeded do.
func deleteTree(s *session, path string) string {
	ch, _, err := s.Children(path)
	if err != nil {
		return errName(err)
	}
	for _, c := range ch {
		if r := deleteTree(s, path+"/"+c); r != "OK" {
			return r
		}
	}
	return errName(s.Delete(path, -1))
}

// wordShape keeps what two servers must agree on in a four-letter word's
// answer: its form and the facts both know, never host details.
func wordShape(w, out, addr string, sid int64) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	kv := map[string]string{}
	for _, l := range lines {
		if k, v, ok := strings.Cut(l, "="); ok {
			kv[k] = v
		}
	}
	_, port, _ := net.SplitHostPort(addr)
	switch w {
	case "conf":
		return fmt.Sprintf("clientPort=%t minSessionTimeout=%s maxSessionTimeout=%s",
			kv["clientPort"] == port, kv["minSessionTimeout"], kv["maxSessionTimeout"])
	case "cons":
		all := true
		for _, l := range lines {
			all = all && strings.HasPrefix(l, " /127.0.0.1:")
		}
		return fmt.Sprintf("lines name clients=%t lists s1=%t", all, strings.Contains(out, fmt.Sprintf("sid=0x%x", sid)))
	case "envi":
		var keys []string
		for _, k := range []string{"zookeeper.version", "host.name", "os.name", "user.dir"} {
			if _, ok := kv[k]; ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		return fmt.Sprintf("first=%q keys=%v", lines[0], keys)
	}
	return fmt.Sprintf("%q", out)
}

// multiText is what a multi answered: its error and each operation's.
func multiText(res []zk.MultiResponse, err error) string {
	var b strings.Builder
	b.WriteString(errName(err))
	for _, r := range res {
		b.WriteString(" " + errName(r.Error))
	}
	return b.String()
}

// zkCli runs Debian's zkCli.sh command against addr and returns what it
// printed of its own (the lines after the connection's), or that it failed.
func zkCli(t *testing.T, addr string, args ...string) string {
	cli := "/usr/share/zookeeper/bin/zkCli.sh"
	needFile(t, "zkCli.sh (Debian zookeeper)", cli)
	cmd := exec.Command(cli, append([]string{"-server", addr}, args...)...)
	cmd.Env = append(os.Environ(), "ZOOCFGDIR="+t.TempDir(), "ZOO_LOG_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var kept []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "Exception") || strings.HasPrefix(l, "Failed") || strings.Contains(l, "rror") {
			kept = append(kept, strings.TrimSpace(l))
		}
	}
	if err != nil {
		kept = append(kept, "exit: "+err.Error())
	}
	return fmt.Sprintf("output %q", kept)
}

// builtinText is what a read of a built-in node answered: whether its
// data is null (a -1 length) or empty, its length and its ACL version.
func builtinText(d []byte, st *zk.Stat, err error) string {
	if err != nil {
		return errName(err)
	}
	buf := "null"
	if d != nil {
		buf = fmt.Sprintf("%d bytes", len(d))
	}
	return fmt.Sprintf("OK data=%s aversion=%d", buf, st.Aversion)
}
