package nacos

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

// UDP push to 1.x subscribers, as Nacos' UdpPushService does. A 1.x
// client that lists a service with udpPort (GET /nacos/v1/ns/instance/list)
// is a subscriber of it: when the service's instances change, the push
// loop sends it a datagram {"type":"dom","data":<the 1.x list answer as
// a JSON string>,"lastRefTime":<n>}, gzipped when 1 KiB or more, and the
// client answers {"type":"push-ack","lastRefTime":"<n>"} from its
// receiving socket. A push not acknowledged within UDPAckTimeout is sent
// once more, then given up (the client still polls its list). A
// subscriber lasts UDPSubscriberTTL past its last list (the 1.x client
// lists each service every 10 s), Nacos' client expiry.
//
// Where a push goes: to the udpPort of the host the list request came
// from (its TCP peer), never to the clientIP it names, as Nacos does. A
// request can name any clientIP, so honouring it would let anyone who can
// reach the agent's HTTP port aim pushes (a service's whole instance list
// per change, each retried) at a third host; its TCP peer is the one host
// that proved it is there. 1.x clients bind their receiving socket to
// every address, so a client beside the agent, which lists over loopback,
// gets its pushes on loopback. Subscribers are bounded
// (Config.MaxUDPSubscribers in all, MaxUDPSubscribersPerHost from each
// host other than this one, so that no remote host takes the room of the
// clients beside the agent, which all list over loopback): past either,
// the list is answered and no push is promised (counted, logged).

const (
	// DefaultMaxUDPSubscribers bounds the door's UDP subscribers.
	DefaultMaxUDPSubscribers = 10000
	// MaxUDPSubscribersPerHost bounds one remote host's (loopback counts
	// against the total only).
	MaxUDPSubscribersPerHost = 1000
	// DefaultUDPAckTimeout is Nacos' ACK_TIMEOUT (10 s).
	DefaultUDPAckTimeout = 10 * time.Second
	// DefaultUDPSubscriberTTL is Nacos' client expiry (3 min).
	DefaultUDPSubscriberTTL = 3 * time.Minute
	// udpRetries is Nacos' UDP_MAX_RETRY_TIMES: one resend.
	udpRetries = 1
	// maxDatagram is the largest push sent: UDP's payload limit.
	maxDatagram = 65507
	// gzipAbove is the size from which a push is gzipped, as Nacos does.
	gzipAbove = 1024
)

// udpSub is one subscriber: a host's udpPort listening to one service.
type udpSub struct {
	to       netip.AddrPort
	sv       service
	clusters string
	checksum string    // of the last list answered or pushed
	expires  time.Time // its last list + UDPSubscriberTTL
}

// udpPending is a push waiting for its ack.
type udpPending struct {
	key    string // its subscriber's
	packet []byte
	to     netip.AddrPort
	sent   time.Time
	tries  int
}

type udpState struct {
	conn    *net.UDPConn
	mu      sync.Mutex
	subs    map[string]*udpSub     // by udpSubKey
	perHost map[netip.Addr]int     // subscribers per host
	pending map[string]*udpPending // by ack key (host,port,lastRefTime)
	lastRef int64                  // last push's lastRefTime: strictly increasing
}

func udpSubKey(to netip.AddrPort, sv service, clusters string) string {
	return to.String() + "\x00" + subKey(sv, clusters)
}

func ackKey(to netip.AddrPort, ref int64) string {
	return to.Addr().Unmap().String() + "," + strconv.Itoa(int(to.Port())) + "," + strconv.FormatInt(ref, 10)
}

// startUDP opens the push socket on the HTTP listener's host.
func (s *Server) startUDP(httpAddr net.Addr) error {
	s.udp.subs, s.udp.perHost, s.udp.pending = map[string]*udpSub{}, map[netip.Addr]int{}, map[string]*udpPending{}
	ip := net.IP(nil)
	if ta, ok := httpAddr.(*net.TCPAddr); ok {
		ip = ta.IP
	}
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip})
	if err != nil {
		return fmt.Errorf("nacos: UDP push socket: %w", err)
	}
	s.udp.conn = conn
	return nil
}

// udpSubscribe makes the lister at remote (the list request's peer) a
// subscriber of sv on udpPort; info is what its list was answered.
func (s *Server) udpSubscribe(remote string, udpPort int, sv service, clusters string, info nacoswire.ServiceInfo) {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil || udpPort <= 0 || udpPort > 65535 || s.udp.conn == nil {
		return
	}
	to := netip.AddrPortFrom(ap.Addr().Unmap(), uint16(udpPort))
	key := udpSubKey(to, sv, clusters)
	u := &s.udp
	u.mu.Lock()
	sub := u.subs[key]
	if sub == nil {
		if len(u.subs) >= s.cfg.MaxUDPSubscribers || (!to.Addr().IsLoopback() && u.perHost[to.Addr()] >= MaxUDPSubscribersPerHost) {
			u.mu.Unlock()
			s.countPush("udp_subscribe", errors.New("full"))
			s.log.Warn("UDP subscriber refused: too many subscribers; it is answered its list but not pushed",
				"from", to.String(), "service", sv.name, "limit", s.cfg.MaxUDPSubscribers, "per_remote_host", MaxUDPSubscribersPerHost)
			return
		}
		sub = &udpSub{to: to, sv: sv, clusters: clusters}
		u.subs[key] = sub
		u.perHost[to.Addr()]++
	}
	sub.checksum, sub.expires = info.Checksum, time.Now().Add(s.cfg.UDPSubscriberTTL)
	u.mu.Unlock()
	// A change between computing info and storing the subscriber was seen
	// by no push round: look again.
	s.noteService(sv)
}

// udpRound pushes to the UDP subscribers of the interfaces that changed.
func (s *Server) udpRound(ifaces map[string]bool) {
	u := &s.udp
	now := time.Now()
	u.mu.Lock()
	var subs []*udpSub
	for key, sub := range u.subs {
		if now.After(sub.expires) {
			u.dropLocked(key, sub)
			continue
		}
		if iface, _ := sub.sv.urlKeys(); ifaces[iface] {
			subs = append(subs, sub)
		}
	}
	u.mu.Unlock()
	infos := map[string]nacoswire.ServiceInfo{} // one answer per service and clusters
	for _, sub := range subs {
		k := subKey(sub.sv, sub.clusters)
		info, ok := infos[k]
		if !ok {
			info = s.serviceInfo(sub.sv, sub.clusters)
			info.Name = sub.sv.group + "@@" + sub.sv.name // 1.x names services with their group
			infos[k] = info
		}
		u.mu.Lock()
		stale := sub.checksum == info.Checksum
		sub.checksum = info.Checksum
		u.mu.Unlock()
		if !stale {
			s.udpPush(sub, info)
		}
	}
}

// dropLocked forgets a subscriber and its pending push. u.mu held.
func (u *udpState) dropLocked(key string, sub *udpSub) {
	delete(u.subs, key)
	if u.perHost[sub.to.Addr()]--; u.perHost[sub.to.Addr()] <= 0 {
		delete(u.perHost, sub.to.Addr())
	}
	for ak, p := range u.pending {
		if p.key == key {
			delete(u.pending, ak)
		}
	}
}

// udpPush sends info to sub, replacing its push still waiting for an
// ack (the newer list supersedes it).
func (s *Server) udpPush(sub *udpSub, info nacoswire.ServiceInfo) {
	data, _ := json.Marshal(info)
	u := &s.udp
	u.mu.Lock()
	u.lastRef = max(time.Now().UnixNano(), u.lastRef+1)
	ref := u.lastRef
	u.mu.Unlock()
	packet, err := udpPacket(data, ref)
	if err != nil {
		s.countPush("udp", err)
		s.log.Warn("UDP push not sent; the subscriber gets the change at its next list", "to", sub.to.String(), "service", sub.sv.name, "err", err)
		return
	}
	key := udpSubKey(sub.to, sub.sv, sub.clusters)
	p := &udpPending{key: key, packet: packet, to: sub.to, sent: time.Now(), tries: 1}
	u.mu.Lock()
	if u.subs[key] != sub { // expired meanwhile
		u.mu.Unlock()
		return
	}
	for ak, old := range u.pending {
		if old.key == key {
			delete(u.pending, ak)
		}
	}
	u.pending[ackKey(sub.to, ref)] = p
	u.mu.Unlock()
	_, err = u.conn.WriteToUDPAddrPort(packet, sub.to)
	s.countPush("udp", err)
	if err != nil {
		s.log.Debug("UDP push failed", "to", sub.to.String(), "err", err)
	}
}

// udpPacket is Nacos' push datagram for one list answer.
func udpPacket(data []byte, ref int64) ([]byte, error) {
	b, err := json.Marshal(struct {
		Type        string `json:"type"`
		Data        string `json:"data"`
		LastRefTime int64  `json:"lastRefTime"`
	}{"dom", string(data), ref})
	if err != nil {
		return nil, err
	}
	if len(b) >= gzipAbove {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(b)
		w.Close()
		b = z.Bytes()
	}
	if len(b) > maxDatagram {
		return nil, fmt.Errorf("push of %d bytes (gzipped) is over UDP's %d", len(b), maxDatagram)
	}
	return b, nil
}

// udpAcks reads acks until the socket closes.
func (s *Server) udpAcks() {
	buf := make([]byte, 64<<10)
	for {
		n, from, err := s.udp.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		ref, ok := parseAck(buf[:n])
		if !ok {
			continue
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		s.udp.mu.Lock()
		p := s.udp.pending[ackKey(from, ref)]
		delete(s.udp.pending, ackKey(from, ref))
		s.udp.mu.Unlock()
		if p != nil {
			s.stats.Add(1, "pushes", label("type", "udp_ack"), label("result", "ok"))
		}
	}
}

// parseAck reads a client's ack, {"type":"push-ack","lastRefTime":n}
// with n a string (as the Java and Go clients send it) or a number; ok
// false for anything else, which is dropped.
func parseAck(b []byte) (ref int64, ok bool) {
	var ack struct {
		Type        string          `json:"type"`
		LastRefTime json.RawMessage `json:"lastRefTime"`
	}
	if json.Unmarshal(b, &ack) != nil || ack.Type != "push-ack" {
		return 0, false
	}
	raw := ack.LastRefTime
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		raw = raw[1 : len(raw)-1]
	}
	ref, err := strconv.ParseInt(string(raw), 10, 64)
	return ref, err == nil
}

// udpLoop resends pushes not acknowledged in UDPAckTimeout (once) and
// forgets expired subscribers.
func (s *Server) udpLoop() {
	t := time.NewTicker(min(s.cfg.UDPAckTimeout/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			var resend []*udpPending
			u := &s.udp
			u.mu.Lock()
			for ak, p := range u.pending {
				if now.Sub(p.sent) < s.cfg.UDPAckTimeout {
					continue
				}
				if p.tries > udpRetries {
					delete(u.pending, ak)
					s.countPush("udp_ack", errors.New("no ack"))
					continue
				}
				p.tries++
				p.sent = now
				resend = append(resend, p)
			}
			for key, sub := range u.subs {
				if now.After(sub.expires) {
					u.dropLocked(key, sub)
				}
			}
			u.mu.Unlock()
			for _, p := range resend {
				_, err := u.conn.WriteToUDPAddrPort(p.packet, p.to)
				s.countPush("udp", err)
			}
		}
	}
}

// udpSubscribers is how many UDP subscribers the door has.
func (s *Server) udpSubscribers() int {
	s.udp.mu.Lock()
	defer s.udp.mu.Unlock()
	return len(s.udp.subs)
}
