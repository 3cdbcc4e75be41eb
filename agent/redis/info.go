package redis

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/namecast/namecast/agent/redis/resp"
)

// commandTable is Redis 7.0.15's reply to COMMAND INFO for each command
// the door serves (the server's own description of them, captured from
// redis-server; TestDifferentialAgainstRedis7 compares COMMAND INFO), cut into entries by
// name at start.
//
//go:embed commands.resp
var commandTable []byte

var commandInfo = map[string][]byte{}

func init() {
	r := bufio.NewReader(bytes.NewReader(commandTable))
	r.ReadBytes('\n') // the array's header
	for {
		v, err := resp.ReadValue(r)
		if err != nil {
			break
		}
		// *10\r\n$<n>\r\n<name>\r\n...
		hdr := bytes.SplitN(v, []byte("\r\n"), 4)
		name := string(hdr[2])
		if commands[name] != nil && name != "hello" {
			commandInfo[name] = v
		}
	}
}

// cmdCommand is COMMAND, COMMAND COUNT, COMMAND INFO name... and COMMAND
// DOCS, over the commands the door serves.
func cmdCommand(s *Server, c *conn, args [][]byte, b []byte) []byte {
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range commandInfo {
			if !yield(n) {
				return
			}
		}
	})
	if len(args) == 1 {
		b = resp.Array(b, len(names))
		for _, n := range names {
			b = append(b, commandInfo[n]...)
		}
		return b
	}
	sub := strings.ToLower(string(args[1]))
	if !subcommandKnown("command", sub) {
		return resp.Err(b, unknownSubcommand("command", args[1]))
	}
	switch sub {
	case "count":
		if len(args) != 2 {
			return resp.Err(b, wrongArgs("command|count"))
		}
		return resp.Int(b, int64(len(names)))
	case "info":
		if len(args) == 2 {
			return cmdCommand(s, c, args[:1], b)
		}
		b = resp.Array(b, len(args)-2)
		for _, a := range args[2:] {
			if e := commandInfo[strings.ToLower(string(a))]; e != nil {
				b = append(b, e...)
			} else {
				b = resp.NullArray(b)
			}
		}
		return b
	default: // docs: the door has none to give
		return resp.Array(b, 0)
	}
}

// cmdInfo is INFO [section ...]: what clients read of it (redis_version,
// role, loading), and the door's own counts.
func cmdInfo(s *Server, c *conn, args [][]byte, b []byte) []byte {
	want := map[string]bool{}
	for _, a := range args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	all := len(want) == 0 || want["all"] || want["everything"] || want["default"]
	var sb strings.Builder
	section := func(name string, lines ...string) {
		if !all && !want[strings.ToLower(name)] {
			return
		}
		if sb.Len() > 0 {
			sb.WriteString("\r\n")
		}
		sb.WriteString("# " + name + "\r\n")
		for _, l := range lines {
			sb.WriteString(l + "\r\n")
		}
	}
	keys := s.allKeys()
	_, port, _ := strings.Cut(s.addr[strings.LastIndex(s.addr, ":"):], ":")
	section("Server", "redis_version:"+RedisVersion, "redis_mode:standalone", "os:"+runtime.GOOS, "arch_bits:64",
		"tcp_port:"+port, fmt.Sprintf("uptime_in_seconds:%d", int(time.Since(s.started).Seconds())),
		"executable:namecast", "namecast:a namecast agent's Redis door (Dubbo's redis:// registry)")
	section("Clients", fmt.Sprintf("connected_clients:%d", s.counts.conns.Load()), fmt.Sprintf("maxclients:%d", s.cfg.MaxClients))
	section("Persistence", "loading:0")
	section("Stats", fmt.Sprintf("expired_keys:%d", s.counts.expired.Load()), fmt.Sprintf("rejected_connections:%d", s.counts.refusedConns.Load()),
		fmt.Sprintf("pubsub_channels:%d", s.channelCount()), fmt.Sprintf("pubsub_patterns:%d", s.patternCount()))
	section("Replication", "role:master", "connected_slaves:0")
	ks := []string{}
	if len(keys) > 0 {
		ks = append(ks, fmt.Sprintf("db0:keys=%d,expires=0,avg_ttl=0", len(keys)))
	}
	section("Keyspace", ks...)
	return resp.Bulk(b, sb.String())
}

// RedisVersion is the version INFO reports: the server whose replies the
// door's are tested against.
const RedisVersion = "7.0.15"

func (s *Server) channelCount() int {
	s.pubsub.mu.Lock()
	defer s.pubsub.mu.Unlock()
	return len(s.pubsub.channels)
}

func (s *Server) patternCount() int {
	s.pubsub.mu.Lock()
	defer s.pubsub.mu.Unlock()
	return len(s.pubsub.patterns)
}
