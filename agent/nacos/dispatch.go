package nacos

import (
	"context"
	"encoding/json"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

// dispatch answers one request payload. Whatever it holds, the answer is
// a response payload: an ErrorResponse (with Nacos' code) when the request
// cannot be served, never a dropped call.
func (s *Server) dispatch(ctx context.Context, ci *connInfo, p *nacoswire.Payload) *nacoswire.Payload {
	resp := s.answer(ctx, ci, p)
	s.countRequest(p.Type, resp)
	return resp
}

func (s *Server) answer(ctx context.Context, ci *connInfo, p *nacoswire.Payload) *nacoswire.Payload {
	var base nacoswire.Request
	if err := json.Unmarshal(p.Body, &base); err != nil {
		return errorPayload(nacoswire.ErrInvalidParam, "", p.Type+": body is not a JSON object: "+err.Error())
	}
	rid := base.RequestID
	switch p.Type {
	case nacoswire.TypeServerCheck:
		if !s.reg.Ready() {
			return errorPayload(nacoswire.ErrServerStatus, rid, "the agent has not finished its first sync with the cluster; retry")
		}
		return reply(p.Type, &nacoswire.ServerCheckResponse{Response: ok(rid), ConnectionID: ci.id})
	case nacoswire.TypeHealthCheck:
		return reply(p.Type, &nacoswire.Response{ResultCode: nacoswire.CodeSuccess, Success: true, RequestID: rid})
	}
	handler, known := handlers[p.Type]
	if !known {
		return errorPayload(nacoswire.ErrNoHandler, rid, "the Nacos door has no handler for "+p.Type)
	}
	c := s.awaitClient(ctx, ci)
	if c == nil {
		return errorPayload(nacoswire.ErrUnregistered, rid, "connection is not set up: open the bi-stream and send ConnectionSetupRequest first")
	}
	resp, err := handler(s, c, p.Body)
	if err != nil {
		return errorPayload(codeOf(err), rid, p.Type+": "+err.Error())
	}
	setRequestID(resp, rid)
	return reply(p.Type, resp)
}

// handlers serve the request types that need a set-up connection.
var handlers = map[string]func(*Server, *client, []byte) (any, error){
	nacoswire.TypeInstance:           (*Server).instanceRequest,
	nacoswire.TypePersistentInstance: (*Server).persistentInstanceRequest,
	nacoswire.TypeBatchInstance:      (*Server).batchInstanceRequest,
	nacoswire.TypeServiceQuery:       (*Server).serviceQuery,
	nacoswire.TypeServiceList:        (*Server).serviceList,
	nacoswire.TypeSubscribeService:   (*Server).subscribeService,
	nacoswire.TypeConfigQuery:        (*Server).configQuery,
	nacoswire.TypeConfigPublish:      (*Server).configPublish,
	nacoswire.TypeConfigRemove:       (*Server).configRemove,
	nacoswire.TypeConfigBatchListen:  (*Server).configBatchListen,
}

// codedError carries a Nacos error code.
type codedError struct {
	code int
	msg  string
}

func (e *codedError) Error() string { return e.msg }

func invalid(err error) error { return &codedError{nacoswire.ErrInvalidParam, err.Error()} }

func codeOf(err error) int {
	if ce, ok := err.(*codedError); ok {
		return ce.code
	}
	return nacoswire.ErrServer
}

func ok(rid string) nacoswire.Response {
	r := nacoswire.OK()
	r.RequestID = rid
	return r
}

// setRequestID fills the response's requestId: every response type embeds
// nacoswire.Response first.
func setRequestID(resp any, rid string) {
	switch r := resp.(type) {
	case *nacoswire.Response:
		r.RequestID = rid
	case *nacoswire.InstanceResponse:
		r.RequestID = rid
	case *nacoswire.ServiceInfoResponse:
		r.RequestID = rid
	case *nacoswire.ServiceListResponse:
		r.RequestID = rid
	case *nacoswire.ConfigQueryResponse:
		r.RequestID = rid
	case *nacoswire.ConfigChangeBatchListenResponse:
		r.RequestID = rid
	}
}

func reply(requestType string, v any) *nacoswire.Payload {
	body, err := json.Marshal(v)
	if err != nil {
		return errorPayload(nacoswire.ErrServer, "", "encoding the response: "+err.Error())
	}
	return &nacoswire.Payload{Type: nacoswire.ResponseType(requestType), Body: body}
}

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return invalid(err)
	}
	return nil
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
