package nacos

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

// The Nacos 1.x open API on the HTTP port, for what operators and 1.x
// clients call (Nacos' naming InstanceController, ServiceController and
// config ConfigController under /nacos/v1). Parameters come from the query
// or a form body, as Nacos reads them. Ephemeral instances registered here
// are held by their beats: each beat keeps the instance Config.BeatTimeout
// (30 s, Nacos' ipDeleteTimeout) longer, and the answer tells the client to beat
// every BeatInterval (5 s).

func (s *Server) httpHandler() http.Handler {
	mux := http.NewServeMux()
	handle := func(route string, h http.HandlerFunc) { mux.HandleFunc(route, s.counted(route, h)) }
	handle("POST /nacos/v1/ns/instance", s.httpRegister)
	handle("PUT /nacos/v1/ns/instance", s.httpUpdate)
	handle("PATCH /nacos/v1/ns/instance", s.httpPatch)
	handle("GET /nacos/v1/ns/operator/metrics", s.httpOperatorMetrics)
	handle("DELETE /nacos/v1/ns/instance", s.httpDeregister)
	handle("GET /nacos/v1/ns/instance", s.httpInstance)
	handle("GET /nacos/v1/ns/instance/list", s.httpList)
	handle("PUT /nacos/v1/ns/instance/beat", s.httpBeat)
	handle("GET /nacos/v1/ns/service/list", s.httpServiceList)
	handle("GET /nacos/v1/cs/configs", s.httpConfigGet)
	handle("POST /nacos/v1/cs/configs", s.httpConfigPublish)
	handle("DELETE /nacos/v1/cs/configs", s.httpConfigDelete)
	handle("POST /nacos/v1/cs/configs/listener", s.httpListen)
	s.v2Handlers(handle) // v2.go
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := int64(MaxConfigContent + 16<<10)
		if r.URL.Path == "/nacos/v1/cs/configs/listener" {
			limit = maxListenBody
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		// The handlers read parameters with FormValue, which drops a
		// form it could not read: a body past the bound would be
		// answered as a form without its parameters.
		var tooLarge *http.MaxBytesError
		if err := r.ParseForm(); errors.As(err, &tooLarge) {
			tooLargeError(w, r.URL.Path, tooLarge.Limit)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// tooLargeError refuses a body past the bound, 413 in the shape of the
// API called.
func tooLargeError(w http.ResponseWriter, path string, limit int64) {
	msg := "request body over " + strconv.FormatInt(limit, 10) + " bytes"
	switch {
	case strings.HasPrefix(path, "/nacos/v2/"):
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		writeJSONBody(w, v2Result{Code: 20002, Message: v2Codes[20002], Data: msg})
	case strings.HasPrefix(path, "/nacos/v1/cs/"):
		writeError(w, http.StatusRequestEntityTooLarge, "caused: "+msg+";")
	default:
		writeError(w, http.StatusRequestEntityTooLarge, msg)
	}
}

// httpError answers a naming request's error as Nacos' naming
// ResponseExceptionHandler does: the status and the message as the body.
// A client's error (an invalid parameter) is 400 whatever code says.
func httpError(w http.ResponseWriter, code int, err error) {
	writeError(w, statusOf(code, err), err.Error())
}

// configError answers a config request's error as Nacos' config
// GlobalExceptionHandler does: "caused: <message>;".
func configError(w http.ResponseWriter, code int, err error) {
	writeError(w, statusOf(code, err), "caused: "+err.Error()+";")
}

func statusOf(code int, err error) int {
	if ce, ok := err.(*codedError); ok && ce.code == nacoswire.ErrInvalidParam {
		return http.StatusBadRequest
	}
	return code
}

func writeError(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain;charset=UTF-8")
	w.WriteHeader(status)
	w.Write([]byte(body))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// formService reads the service a request names; a bad name is the
// client's error (400), whatever the handler answers for failures.
func formService(r *http.Request) (service, error) {
	sv, err := newService(r.FormValue("namespaceId"), r.FormValue("groupName"), r.FormValue("serviceName"))
	if err != nil {
		return sv, invalid(err)
	}
	return sv, nil
}

// httpInstance is InstanceController.detail: the instance of the
// cluster named (DEFAULT when none), disabled or not.
func (s *Server) httpInstance(w http.ResponseWriter, r *http.Request) {
	sv, err := formService(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	ip, cluster := r.FormValue("ip"), clusterOf(formCluster(r))
	port, _ := strconv.Atoi(r.FormValue("port"))
	hosts := s.hosts(sv, "")
	if len(hosts) == 0 {
		httpError(w, http.StatusNotFound, errors.New("no ips found for cluster "+cluster+" in service "+sv.group+"@@"+sv.name))
		return
	}
	for _, h := range hosts {
		if h.IP == ip && h.Port == port && h.ClusterName == cluster {
			writeJSON(w, map[string]any{"service": sv.group + "@@" + sv.name, "ip": h.IP, "port": h.Port,
				"clusterName": h.ClusterName, "weight": h.Weight, "healthy": h.Healthy, "instanceId": h.InstanceID,
				"metadata": h.Metadata})
			return
		}
	}
	httpError(w, http.StatusNotFound, errors.New("no matched ip found!"))
}

func (s *Server) httpList(w http.ResponseWriter, r *http.Request) {
	sv, err := formService(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	clusters := r.FormValue("clusters")
	info := s.serviceInfo(sv, clusters)
	info.Name = sv.group + "@@" + sv.name // 1.x names services with their group
	if udpPort, err := strconv.Atoi(r.FormValue("udpPort")); err == nil && udpPort > 0 {
		s.udpSubscribe(r.RemoteAddr, udpPort, sv, clusters, info) // udp.go
	}
	writeJSON(w, healthyOnlyOf(info, r.FormValue("healthyOnly")))
}

// listOf is the v2 list: sv's ServiceInfo named with its group, only the
// healthy instances when healthyOnly is true.
func (s *Server) listOf(sv service, clusters, healthyOnly string) nacoswire.ServiceInfo {
	info := s.serviceInfo(sv, clusters)
	info.Name = sv.group + "@@" + sv.name
	return healthyOnlyOf(info, healthyOnly)
}

// healthyOnlyOf is info with only its healthy instances when healthyOnly
// is true (a new list: info's may be kept elsewhere).
func healthyOnlyOf(info nacoswire.ServiceInfo, healthyOnly string) nacoswire.ServiceInfo {
	if only, _ := strconv.ParseBool(healthyOnly); only {
		kept := []nacoswire.Instance{}
		for _, h := range info.Hosts {
			if h.Healthy && h.Enabled {
				kept = append(kept, h)
			}
		}
		info.Hosts = kept
	}
	return info
}

func (s *Server) httpServiceList(w http.ResponseWriter, r *http.Request) {
	atoi := func(name string, def int) int {
		if n, err := strconv.Atoi(r.FormValue(name)); err == nil {
			return n
		}
		return def
	}
	p, err := s.servicePage(r.FormValue("namespaceId"), r.FormValue("groupName"), atoi("pageNo", 1), atoi("pageSize", 10))
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, map[string]any{"count": p.count, "doms": p.page})
}
