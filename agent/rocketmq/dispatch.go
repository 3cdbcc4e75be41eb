package rocketmq

import (
	"fmt"
	"strconv"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
)

// handlerFunc answers one request by filling rep, which arrives as a
// SUCCESS response to req with no ext fields and no body.
type handlerFunc func(s *Server, c *conn, req *remoting.Command, rep *reply)

type handler struct {
	fn handlerFunc
	// mutates marks requests that change state: they run in order on the
	// connection's worker. The others are answered on the reader goroutine.
	mutates bool
}

// handlers is every request code a NameServer serves (§2.1). The embedded
// controller (1001-1013) and NOTIFY_MIN_BROKER_ID_CHANGE (sent by a
// NameServer, never to it) are not among them.
var handlers = map[int]handler{
	remoting.PutKVConfig:                   {(*Server).putKVConfig, true},
	remoting.GetKVConfig:                   {(*Server).getKVConfig, false},
	remoting.DeleteKVConfig:                {(*Server).deleteKVConfig, true},
	remoting.GetKVListByNamespace:          {(*Server).getKVList, false},
	remoting.RegisterBroker:                {(*Server).registerBroker, true},
	remoting.UnregisterBroker:              {(*Server).unregisterBroker, true},
	remoting.QueryDataVersion:              {(*Server).queryDataVersion, true},
	remoting.BrokerHeartbeat:               {(*Server).brokerHeartbeat, true},
	remoting.GetRouteInfoByTopic:           {(*Server).getRouteInfo, false},
	remoting.GetBrokerClusterInfo:          {(*Server).getClusterInfo, false},
	remoting.GetBrokerMemberGroup:          {(*Server).getBrokerMemberGroup, false},
	remoting.WipeWritePermOfBroker:         {(*Server).wipeWritePerm, true},
	remoting.AddWritePermOfBroker:          {(*Server).addWritePerm, true},
	remoting.GetAllTopicListFromNameServer: {(*Server).getAllTopicList, false},
	remoting.DeleteTopicInNamesrv:          {(*Server).deleteTopic, true},
	remoting.RegisterTopicInNamesrv:        {(*Server).registerTopic, true},
	remoting.GetTopicsByCluster:            {(*Server).getTopicsByCluster, false},
	remoting.GetSystemTopicListFromNS:      {(*Server).getSystemTopicList, false},
	remoting.GetUnitTopicList:              {(*Server).getUnitTopicList, false},
	remoting.GetHasUnitSubTopicList:        {(*Server).getUnitTopicList, false},
	remoting.GetHasUnitSubUnunitTopicList:  {(*Server).getUnitTopicList, false},
	remoting.UpdateNamesrvConfig:           {(*Server).updateConfig, true},
	remoting.GetNamesrvConfig:              {(*Server).getConfig, false},
}

var notSupported = handler{fn: (*Server).notSupported}

func lookup(code int) handler {
	if h, ok := handlers[code]; ok {
		return h
	}
	return notSupported
}

// run calls h, turning a panic into Java's answer to a processor exception
// (SYSTEM_ERROR with a description) instead of taking the agent down.
func (s *Server) run(h handler, c *conn, req *remoting.Command, rep *reply) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("request handler panicked", "code", req.Code, "panic", p)
			rep.reset(req)
			rep.fail(remoting.SystemError, fmt.Sprintf("internal error handling request code %d: %v", req.Code, p))
		}
	}()
	h.fn(s, c, req, rep)
}

func (s *Server) notSupported(_ *conn, req *remoting.Command, rep *reply) {
	// Java's remark, leading space included (§1.5).
	rep.fail(remoting.RequestCodeNotSupported, " request type "+strconv.Itoa(req.Code)+" not supported")
}

// reply is a response being built. A connection keeps one per goroutine, so
// answering a query allocates nothing for the response itself.
type reply struct {
	remoting.Command
	// buf is scratch a handler may encode the body into; Body may alias it.
	buf []byte
}

func (r *reply) reset(req *remoting.Command) {
	buf := r.buf[:0]
	if cap(buf) > keepOut {
		buf = nil
	}
	r.Command = remoting.Command{
		Code:     remoting.Success,
		Language: remoting.LanguageJava,
		Version:  remoting.VersionCurrent,
		Opaque:   req.Opaque,
		Flag:     remoting.FlagResponse,
	}
	r.buf = buf
}

func (r *reply) fail(code int, remark string) {
	r.Code = code
	r.Remark = remark
}

// requireExt checks the header fields Java marks @CFNotNull, answering a
// missing one the way Java's header decoding does.
func requireExt(req *remoting.Command, rep *reply, keys ...string) bool {
	for _, k := range keys {
		// Java's @CFNotNull rejects only a missing field: an empty string
		// is a value (an empty KV value, an empty name to look up).
		if _, ok := req.ExtFields[k]; !ok {
			rep.fail(remoting.SystemError, "the custom field <"+k+"> is null")
			return false
		}
	}
	return true
}
