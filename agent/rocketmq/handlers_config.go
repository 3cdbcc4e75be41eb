package rocketmq

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
)

// runtimeOptions are the NameServer settings UPDATE_NAMESRV_CONFIG may
// change. They are this agent's alone and last until it restarts.
type runtimeOptions struct {
	// orderMessageEnable fills a route's orderTopicConf from the KV
	// namespace ORDER_TOPIC_CONFIG (Java default false).
	orderMessageEnable atomic.Bool
	// returnOrderTopicConfig returns that namespace to registering brokers
	// (Java default true).
	returnOrderTopicConfig atomic.Bool
}

// updatableConfig is the whitelist of UPDATE_NAMESRV_CONFIG. Java applies
// any key not on a blacklist, which made the request a remote code
// execution vector (CVE-2023-33246, CVE-2023-37582); namecast applies only
// these harmless switches and refuses everything else.
var updatableConfig = map[string]func(*Server, bool){
	"orderMessageEnable": func(s *Server, v bool) { s.opts.orderMessageEnable.Store(v); s.cache.clear() },
	"returnOrderTopicConfigToBroker": func(s *Server, v bool) {
		s.opts.returnOrderTopicConfig.Store(v)
	},
}

// updateConfig is UPDATE_NAMESRV_CONFIG (318): a Java properties body.
func (s *Server) updateConfig(_ *conn, req *remoting.Command, rep *reply) {
	props := parseProperties(string(req.Body))
	var refused []string
	values := map[string]bool{}
	for k, v := range props {
		if _, ok := updatableConfig[k]; !ok {
			refused = append(refused, k)
			continue
		}
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			rep.fail(remoting.SystemError, fmt.Sprintf("%s must be true or false, got %q", k, v))
			return
		}
		values[k] = b
	}
	if len(refused) > 0 {
		slices.Sort(refused)
		rep.fail(remoting.NoPermission, "Can not update config in black list. namecast updates only "+
			strings.Join(slices.Sorted(maps.Keys(updatableConfig)), ", ")+"; refused: "+strings.Join(refused, ", "))
		return
	}
	for k, v := range values {
		updatableConfig[k](s, v)
		s.log.Info("NameServer config updated over the protocol", "key", k, "value", v)
	}
}

// getConfig is GET_NAMESRV_CONFIG (319): the settings that mean something
// here, as Java properties text.
func (s *Server) getConfig(_ *conn, _ *remoting.Command, rep *reply) {
	props := map[string]string{
		"orderMessageEnable":                strconv.FormatBool(s.opts.orderMessageEnable.Load()),
		"returnOrderTopicConfigToBroker":    strconv.FormatBool(s.opts.returnOrderTopicConfig.Load()),
		"scanNotActiveBrokerInterval":       strconv.FormatInt(s.cfg.ScanInterval.Milliseconds(), 10),
		"serverChannelMaxIdleTimeSeconds":   strconv.FormatInt(int64(s.cfg.IdleTimeout.Seconds()), 10),
		"brokerNotActiveTimeoutMillis":      strconv.FormatInt(s.cfg.BrokerTimeout.Milliseconds(), 10),
		"enableAllTopicList":                "true",
		"enableTopicList":                   "true",
		"deleteTopicWithBrokerRegistration": "false",
		"supportActingMaster":               "false",
		"needWaitForService":                "true",
		"frameMaxLength":                    strconv.Itoa(s.cfg.MaxFrame),
		"listenAddr":                        s.Addr(),
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(props)) {
		b.WriteString(k + "=" + props[k] + "\n")
	}
	rep.Body = []byte(b.String())
}

// parseProperties reads k=v (or k:v) lines, skipping blanks and comments,
// which is all Java's mqadmin sends.
func parseProperties(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			out[line] = ""
			continue
		}
		out[strings.TrimSpace(line[:i])] = strings.TrimSpace(line[i+1:])
	}
	return out
}
