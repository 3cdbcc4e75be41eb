package nacos

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

// The v2 open API (Nacos' InstanceControllerV2, ServiceControllerV2,
// ConfigControllerV2, OperatorControllerV2), what Nacos 2 documents
// first: the same operations as the 1.x API, each answered as
// {"code":0,"message":"success","data":...}, and each refusal with its
// HTTP status and {"code":<Nacos' ErrorCode>,"message":<its
// text>,"data":<the reason>} (NacosApiExceptionHandler).

// v2Result is Nacos' api.model.v2.Result.
type v2Result struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

// Nacos' ErrorCode (api.model.v2.ErrorCode) values the door answers.
var v2Codes = map[int]string{
	10000: "parameter missing",
	20002: "parameter validate error",
	20004: "resource not found",
	20005: "resource conflict",
	21000: "service name error",
	21001: "weight error",
	21002: "instance metadata error",
	21004: "instance error",
	30000: "server error",
}

func writeJSONBody(w http.ResponseWriter, v any) { json.NewEncoder(w).Encode(v) }

func writeV2(w http.ResponseWriter, data any) {
	writeJSON(w, v2Result{Code: 0, Message: "success", Data: data})
}

// writeV2Error answers err in the v2 shape: the client's errors 400 with
// the ErrorCode their reason is (as the controllers and forms throw
// them), not found 404, the door's refusals (a budget, the data dir)
// 503 or 500.
func writeV2Error(w http.ResponseWriter, err error) {
	status, code := http.StatusInternalServerError, 30000
	msg := err.Error()
	if ce, ok := err.(*codedError); ok {
		switch ce.code {
		case nacoswire.ErrInvalidParam:
			status = http.StatusBadRequest
			switch {
			case strings.Contains(msg, "is required") || strings.Contains(msg, "is not present") || strings.Contains(msg, "is empty"):
				code = 10000
			case strings.Contains(msg, "weight"):
				code = 21001
			case strings.Contains(msg, "metadata"):
				code = 21002
			case strings.Contains(msg, "serviceName"):
				code = 21000
			case strings.Contains(msg, "service not found") || strings.HasPrefix(strings.ToLower(msg), "instance"):
				code = 21004
			default:
				code = 20002
			}
		case nacoswire.ErrNotFound:
			status, code = http.StatusNotFound, 20004
		case nacoswire.ErrConflict:
			status, code = http.StatusInternalServerError, 20005
		case nacoswire.ErrOverThreshold:
			status = http.StatusServiceUnavailable
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	writeJSONBody(w, v2Result{Code: code, Message: v2Codes[code], Data: msg})
}

func (s *Server) v2Handlers(handle func(string, http.HandlerFunc)) {
	handle("POST /nacos/v2/ns/instance", s.v2(func(r *http.Request) (any, error) {
		sv, in, err := v2Instance(r)
		if err != nil {
			return nil, err
		}
		return "ok", s.registerHTTP(sv, in)
	}))
	handle("DELETE /nacos/v2/ns/instance", s.v2(func(r *http.Request) (any, error) {
		sv, in, err := v2Instance(r)
		if err != nil {
			return nil, err
		}
		return "ok", saved(s.deregisterHTTP(sv, in))
	}))
	handle("PUT /nacos/v2/ns/instance", s.v2(func(r *http.Request) (any, error) {
		if _, _, err := v2Instance(r); err != nil {
			return nil, err
		}
		return "ok", s.update(r)
	}))
	handle("GET /nacos/v2/ns/instance", s.v2(s.v2InstanceDetail))
	handle("GET /nacos/v2/ns/instance/list", s.v2(func(r *http.Request) (any, error) {
		sv, err := v2Service(r)
		if err != nil {
			return nil, err
		}
		return s.listOf(sv, r.FormValue("clusterName"), r.FormValue("healthyOnly")), nil
	}))
	handle("PUT /nacos/v2/ns/instance/beat", s.httpBeat)
	handle("GET /nacos/v2/ns/service/list", s.v2(func(r *http.Request) (any, error) {
		pageNo, pageSize := atoiOr(r.FormValue("pageNo"), 1), min(atoiOr(r.FormValue("pageSize"), 20), 500)
		p, err := s.servicePage(r.FormValue("namespaceId"), r.FormValue("groupName"), pageNo, pageSize)
		if err != nil {
			return nil, err
		}
		return map[string]any{"count": p.count, "services": p.page}, nil
	}))
	handle("GET /nacos/v2/ns/operator/metrics", s.v2(func(r *http.Request) (any, error) {
		return s.operatorMetrics(strings.EqualFold(or(r.FormValue("onlyStatus"), "true"), "true")), nil
	}))
	handle("GET /nacos/v2/cs/config", s.v2(func(r *http.Request) (any, error) {
		id, err := v2Config(r)
		if err != nil {
			return nil, err
		}
		content, found := s.config(id)
		if !found {
			return nil, &codedError{nacoswire.ErrNotFound, "config data not exist"}
		}
		return content, nil
	}))
	handle("POST /nacos/v2/cs/config", s.v2(func(r *http.Request) (any, error) {
		id, err := v2Config(r)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(r.FormValue("content")) == "" {
			return nil, invalid(fmt.Errorf("Required parameter 'content' type String is not present"))
		}
		done, err := s.publishConfig(id, r.FormValue("content"), r.FormValue("type"), strings.TrimSpace(r.Header.Get("casMd5")))
		if err == nil && !done {
			err = &codedError{nacoswire.ErrConflict, "Cas publish fail, server md5 may have changed."}
		}
		return true, err
	}))
	handle("DELETE /nacos/v2/cs/config", s.v2(func(r *http.Request) (any, error) {
		id, err := v2Config(r)
		if err != nil {
			return nil, err
		}
		return true, s.removeConfig(id)
	}))
}

// v2 adapts a handler returning the answer's data to the v2 shapes.
func (s *Server) v2(h func(*http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		data, err := h(r)
		if err != nil {
			writeV2Error(w, err)
			return
		}
		writeV2(w, data)
	}
}

// v2Service reads serviceName (required) and its namespace and group.
func v2Service(r *http.Request) (service, error) {
	if strings.TrimSpace(r.FormValue("serviceName")) == "" {
		return service{}, invalid(fmt.Errorf("Required parameter 'serviceName' type String is not present"))
	}
	return formService(r)
}

// v2Instance is InstanceForm.validate and the instance it names.
func v2Instance(r *http.Request) (service, nacoswire.Instance, error) {
	sv, err := v2Service(r)
	if err != nil {
		return sv, nacoswire.Instance{}, err
	}
	for _, name := range []string{"ip", "port"} {
		if strings.TrimSpace(r.FormValue(name)) == "" {
			return sv, nacoswire.Instance{}, invalid(fmt.Errorf("Required parameter '%s' is not present", name))
		}
	}
	in, err := formInstance(r)
	return sv, in, err
}

// v2Config reads dataId and group (required) and namespaceId.
func v2Config(r *http.Request) (configID, error) {
	for _, name := range []string{"dataId", "group"} {
		if strings.TrimSpace(r.FormValue(name)) == "" {
			return configID{}, invalid(fmt.Errorf("Required parameter '%s' type String is not present", name))
		}
	}
	id, err := newConfigID(r.FormValue("namespaceId"), r.FormValue("group"), r.FormValue("dataId"))
	if err != nil {
		return id, invalid(err)
	}
	return id, nil
}

func (s *Server) v2InstanceDetail(r *http.Request) (any, error) {
	sv, err := v2Service(r)
	if err != nil {
		return nil, err
	}
	ip, cluster := r.FormValue("ip"), clusterOf(formCluster(r))
	port, _ := strconv.Atoi(r.FormValue("port"))
	for _, h := range s.hosts(sv, "") {
		if h.IP == ip && h.Port == port && h.ClusterName == cluster {
			return map[string]any{"serviceName": sv.group + "@@" + sv.name, "ip": h.IP, "port": h.Port,
				"clusterName": h.ClusterName, "weight": h.Weight, "healthy": h.Healthy, "instanceId": h.InstanceID,
				"metadata": h.Metadata}, nil
		}
	}
	return nil, &codedError{nacoswire.ErrNotFound, "no matched ip found!"}
}

func atoiOr(v string, def int) int {
	if n, err := strconv.Atoi(v); err == nil {
		return n
	}
	return def
}
