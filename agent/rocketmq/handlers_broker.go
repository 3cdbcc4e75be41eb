package rocketmq

import (
	"errors"
	"strconv"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/routes"
)

// orderTopicConfigNS is the KV namespace of ordered topics, returned to
// brokers on registration and, with orderMessageEnable, to clients.
const orderTopicConfigNS = "ORDER_TOPIC_CONFIG"

// maxFilterServers bounds a broker's filter server list.
const maxFilterServers = 32

// registerBroker is REGISTER_BROKER (103, §2.3, §5.2).
func (s *Server) registerBroker(c *conn, req *remoting.Command, rep *reply) {
	ext := req.ExtFields
	if !requireExt(req, rep, "brokerName", "brokerAddr", "clusterName", "brokerId") {
		return
	}
	r, err := parseRegistration(ext, s.cfg.BrokerTimeout)
	if err != nil {
		rep.fail(remoting.SystemError, err.Error())
		return
	}
	if err := remoting.CheckBodyCRC32(req.Body, ext["bodyCrc32"]); err != nil {
		if errors.Is(err, remoting.ErrBodyCRC32) {
			rep.fail(remoting.SystemError, "crc32 not match") // Java's words: brokers look for them
		} else {
			rep.fail(remoting.SystemError, err.Error())
		}
		return
	}
	body, err := remoting.DecodeRegisterBrokerBody(req.Body, req.Version, 0)
	if err != nil {
		rep.fail(remoting.SystemError, "cannot decode the registration body: "+err.Error())
		return
	}
	// Brokers start filterServerNums (default 0) filter servers; the bound
	// keeps a broker record small enough to gossip.
	if len(body.FilterServers) > maxFilterServers {
		rep.fail(remoting.SystemError, "too many filter servers: "+strconv.Itoa(len(body.FilterServers))+
			", namecast keeps at most "+strconv.Itoa(maxFilterServers)+" per broker")
		return
	}
	for _, f := range body.FilterServers {
		if err := checkAddr("filter server", f); err != nil {
			rep.fail(remoting.SystemError, err.Error())
			return
		}
	}
	res, ok := s.register(c, r, body)
	if !ok {
		rep.fail(remoting.SystemError, "register broker failed")
		return
	}
	if err := res.saving.Wait(); err != nil && res.unsaved == nil {
		res.unsaved = err
	}
	if res.unsaved != nil {
		if errors.Is(res.unsaved, routes.ErrBudget) {
			rep.fail(remoting.SystemError, "registration refused: "+res.unsaved.Error())
			return
		}
		rep.fail(remoting.SystemError, "registration not saved: "+res.unsaved.Error())
		return
	}
	if res.masterAddr != "" {
		rep.SetExt("masterAddr", res.masterAddr)
		rep.SetExt("haServerAddr", res.haAddr)
	}
	if s.opts.returnOrderTopicConfig.Load() {
		if kv, known := s.kvNamespace(orderTopicConfigNS); known {
			rep.buf = (&remoting.KVTable{Table: kv}).AppendJSON(rep.buf[:0])
			rep.Body = rep.buf
		}
	}
}

func parseRegistration(ext map[string]string, defTimeout time.Duration) (registration, error) {
	r := registration{cluster: ext["clusterName"], name: ext["brokerName"], addr: ext["brokerAddr"],
		haAddr: ext["haServerAddr"], zone: ext["__ZONE_NAME"], timeout: defTimeout}
	var err error
	if r.id, err = parseBrokerID(ext["brokerId"]); err != nil {
		return r, err
	}
	if err := errors.Join(checkName("clusterName", r.cluster), checkName("brokerName", r.name),
		checkAddr("brokerAddr", r.addr)); err != nil {
		return r, err
	}
	if ms, err := strconv.ParseInt(ext["heartbeatTimeoutMillis"], 10, 64); err == nil && ms > 0 {
		r.timeout = time.Duration(ms) * time.Millisecond
	}
	if v, ok := ext["enableActingMaster"]; ok {
		b := v == "true"
		r.actingMaster = &b
	}
	return r, nil
}

// unregisterBroker is UNREGISTER_BROKER (104): SUCCESS, as Java, unless
// the data dir cannot save the removal: then SYSTEM_ERROR saying so, and
// when it could not even be written the broker stays registered (a broker
// shutting down logs the error and closes its connection, which withdraws
// it anyway: connClosed).
func (s *Server) unregisterBroker(_ *conn, req *remoting.Command, rep *reply) {
	if !requireExt(req, rep, "brokerName", "brokerAddr", "clusterName", "brokerId") {
		return
	}
	ext := req.ExtFields
	ok, err := s.unregister(ext["clusterName"], ext["brokerName"], ext["brokerAddr"])
	if err != nil {
		rep.fail(remoting.SystemError, "unregistration not saved: "+err.Error())
		return
	}
	if ok {
		s.log.Info("broker unregistered", "cluster", ext["clusterName"], "broker", ext["brokerName"],
			"id", ext["brokerId"], "addr", ext["brokerAddr"])
	}
}

// queryDataVersion is QUERY_DATA_VERSION (322): whether the broker's topic
// config changed since its registration here. Brokers with slave acting
// master also send it oneway, every second, as a heartbeat.
func (s *Server) queryDataVersion(_ *conn, req *remoting.Command, rep *reply) {
	if !requireExt(req, rep, "brokerName", "brokerAddr", "clusterName", "brokerId") {
		return
	}
	cluster, addr := req.ExtFields["clusterName"], req.ExtFields["brokerAddr"]
	var theirs remoting.DataVersion
	decodeErr := remoting.Unmarshal(req.Body, &theirs)
	ours, known := s.dataVersion(cluster, addr)
	changed := !known || decodeErr != nil || ours != theirs
	s.touch(cluster, addr)
	rep.SetExt("changed", strconv.FormatBool(changed))
	if known {
		rep.buf = ours.AppendJSON(rep.buf[:0])
		rep.Body = rep.buf
	}
}

// brokerHeartbeat is BROKER_HEARTBEAT (904, 5.x, oneway).
func (s *Server) brokerHeartbeat(_ *conn, req *remoting.Command, rep *reply) {
	if !requireExt(req, rep, "clusterName", "brokerAddr") {
		return
	}
	s.touch(req.ExtFields["clusterName"], req.ExtFields["brokerAddr"])
}
