package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/namecast/namecast/routes"
)

// InstanceRegistration is one instance of a Dubbo 3 application
// registered over HTTP. It becomes the records a Dubbo 3 provider writes
// through ZooKeeper (docs/protocols/dubbo-apps.md): its
// /services/{app}/{id} znode holding Curator's ServiceInstance JSON, and,
// when it names interfaces, their /dubbo/mapping/{interface} entries and
// the application's MetadataInfo at /dubbo/metadata/{app}/{revision} (and
// /dubbo/{app}/{revision}, where dubbo-go looks for it), with
// dubbo.metadata.storage-type=remote so that a consumer reads the
// interfaces from there instead of asking the instance's MetadataService.
type InstanceRegistration struct {
	App     string `json:"app"`
	Address string `json:"address"`
	Port    int    `json:"port"`
	// ID defaults to address:port, as Dubbo names its instances.
	ID string `json:"id,omitempty"`
	// Interfaces the instance exports, over Protocol (default dubbo).
	Interfaces []string `json:"interfaces,omitempty"`
	Protocol   string   `json:"protocol,omitempty"`
	// Metadata is added to the payload's metadata, over what namecast
	// writes (revision, storage type, endpoints).
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Bounds on what an HTTP registration may carry: an instance's znode is
// copied to every agent.
const (
	maxInstanceInterfaces = 256
	maxInstanceMetadata   = 64
	maxMetadataValue      = 4096
)

func (r *InstanceRegistration) validate() error {
	if err := checkName("app", r.App); err != nil {
		return err
	}
	if r.Address == "" || len(r.Address) > 255 || strings.ContainsAny(r.Address, "/ ") {
		return fmt.Errorf("address %q must be the instance's host or IP, 1-255 characters, no '/' or space", r.Address)
	}
	if r.Port < 1 || r.Port > 65535 {
		return fmt.Errorf("port must be from 1 to 65535, got %d", r.Port)
	}
	if r.ID == "" {
		r.ID = r.Address + ":" + strconv.Itoa(r.Port)
	}
	if len(r.ID) > 255 || r.ID == "." || r.ID == ".." || strings.ContainsAny(r.ID, "/") || hasControl(r.ID) {
		return fmt.Errorf("id %q must be 1-255 characters, no '/' or control characters (default: address:port)", r.ID)
	}
	if r.Protocol == "" {
		r.Protocol = "dubbo"
	}
	if err := checkName("protocol", r.Protocol); err != nil {
		return err
	}
	if len(r.Interfaces) > maxInstanceInterfaces {
		return fmt.Errorf("at most %d interfaces per instance, got %d", maxInstanceInterfaces, len(r.Interfaces))
	}
	for _, i := range r.Interfaces {
		if err := checkURLComponent("interface", i); err != nil {
			return err
		}
	}
	if len(r.Metadata) > maxInstanceMetadata {
		return fmt.Errorf("at most %d metadata entries, got %d", maxInstanceMetadata, len(r.Metadata))
	}
	for k, v := range r.Metadata {
		if k == "" || len(k) > 255 || len(v) > maxMetadataValue {
			return fmt.Errorf("metadata %q: keys 1-255 characters, values at most %d", k, maxMetadataValue)
		}
	}
	return nil
}

func hasControl(s string) bool {
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

// RegisterInstance registers an instance on this agent: it is this
// agent's record, withdrawn when the TTL runs out (0: as long as the
// agent), on UnregisterInstance, or when the agent dies. Registering it
// again renews the TTL and, if anything changed, replaces it.
func (s *Server) RegisterInstance(reg InstanceRegistration, ttl time.Duration) (routes.Instance, error) {
	if err := reg.validate(); err != nil {
		return routes.Instance{}, err
	}
	md := map[string]string{}
	undo := func() {}
	if len(reg.Interfaces) > 0 {
		// The application's mapping and metadata are cluster rules, saved
		// before the instance; an instance refused after them (another's
		// at its path, past the budget, not saved) takes them back, so a
		// refused registration changes nothing.
		s.appsMu.Lock()
		defer s.appsMu.Unlock()
		meta, rev := metadataInfo(reg)
		md[routes.MetadataRevisionKey] = rev
		md["dubbo.metadata.storage-type"] = "remote"
		md["dubbo.endpoints"] = fmt.Sprintf(`[{"port":%d,"protocol":%q}]`, reg.Port, reg.Protocol)
		s.regMu.Lock()
		err := s.instanceConflict(reg)
		s.regMu.Unlock()
		if err != nil {
			return routes.Instance{}, err
		}
		if undo, err = s.publishAppRules(reg, meta, rev); err != nil {
			return routes.Instance{}, err // nothing of the instance written
		}
	}
	for k, v := range reg.Metadata {
		md[k] = v
	}
	in, applied, err := s.registerInstance(reg, ttl, md)
	if err != nil {
		if !applied {
			undo()
		}
		return routes.Instance{}, err
	}
	return in, nil
}

// instanceConflict refuses reg when its path holds an instance a
// ZooKeeper session registered here. regMu held.
func (s *Server) instanceConflict(reg InstanceRegistration) error {
	key := routes.ZnodeKey(routes.InstancePath(reg.App, reg.ID), "")
	if old, ok := s.localRecord(key); ok && old.Znode != nil && old.Znode.Owner != routes.OriginOwner(s.table.Local()) {
		return errorf(http.StatusConflict, "instance %s of %s is registered here by ZooKeeper session 0x%x: it is that session's until it ends", reg.ID, reg.App, old.Znode.Owner)
	}
	return nil
}

// registerInstance applies an instance (writeHTTP), and reports whether
// it did (an error then says it is not on disk).
func (s *Server) registerInstance(reg InstanceRegistration, ttl time.Duration, md map[string]string) (routes.Instance, bool, error) {
	path := routes.InstancePath(reg.App, reg.ID)
	key := routes.ZnodeKey(path, "")
	owner := routes.OriginOwner(s.table.Local())
	s.regMu.Lock()
	if err := s.instanceConflict(reg); err != nil {
		s.regMu.Unlock()
		return routes.Instance{}, false, err
	}
	now := time.Now().UnixMilli()
	z := routes.Znode{Path: path, Ctime: now, Mtime: now, Owner: owner}
	if old, ok := s.localRecord(key); ok && old.Znode != nil {
		z.Ctime, z.Version = old.Znode.Ctime, old.Znode.Version
		z.Data = routes.CuratorInstanceJSON(reg.App, reg.ID, reg.Address, reg.Port, md, z.Ctime)
		if string(z.Data) == string(old.Znode.Data) {
			z = *old.Znode // unchanged: a renewal, the record as it is
		} else {
			z.Version++
		}
	} else {
		z.Data = routes.CuratorInstanceJSON(reg.App, reg.ID, reg.Address, reg.Port, md, now)
	}
	if z.Stamp == 0 {
		z.Stamp = s.table.Stamp() // a new write: later than every record of the path seen
	}
	applied, err := s.writeHTTPApplied(key, nil, ttl, []routes.Record{{Znode: &z}}, nil, nil)
	if err != nil {
		return routes.Instance{}, applied, err
	}
	in := routes.Instance{App: reg.App, ID: reg.ID, Address: reg.Address, Port: reg.Port,
		Revision: md[routes.MetadataRevisionKey], Metadata: md, Agent: s.table.Local(), Registered: z.Ctime}
	return in, true, nil
}

// UnregisterInstance withdraws an instance registered on this agent over
// HTTP; false when there is none. The mapping and metadata stay, as
// Dubbo's do: other instances may share them.
func (s *Server) UnregisterInstance(app, id string) (bool, error) {
	if err := checkName("app", app); err != nil {
		return false, err
	}
	key := routes.ZnodeKey(routes.InstancePath(app, id), "")
	s.regMu.Lock()
	old, ok := s.localRecord(key)
	if !ok || old.Znode == nil {
		s.regMu.Unlock()
		return false, nil
	}
	if old.Znode.Owner != routes.OriginOwner(s.table.Local()) {
		s.regMu.Unlock()
		return false, errorf(http.StatusConflict, "instance %s of %s is held by ZooKeeper session 0x%x: it goes when that session ends", id, app, old.Znode.Owner)
	}
	return s.withdraw(key)
}

// metadataInfo is the application's MetadataInfo for reg (dubbo-go's
// info.MetadataInfo JSON, which Java's reads too) and its revision: a hash
// of the services, so instances exporting the same share one node.
func metadataInfo(reg InstanceRegistration) ([]byte, string) {
	type serviceInfo struct {
		Name     string            `json:"name"`
		Protocol string            `json:"protocol"`
		Path     string            `json:"path"`
		Params   map[string]string `json:"params"`
	}
	ifaces := append([]string(nil), reg.Interfaces...)
	sort.Strings(ifaces)
	services := map[string]serviceInfo{}
	for _, i := range ifaces {
		services[i+":"+reg.Protocol] = serviceInfo{Name: i, Protocol: reg.Protocol, Path: i,
			Params: map[string]string{"interface": i, "side": "provider", "application": reg.App}}
	}
	sb, _ := json.Marshal(services)
	sum := sha256.Sum256(append([]byte(reg.App+"\x00"), sb...))
	rev := hex.EncodeToString(sum[:8])
	b, _ := json.Marshal(struct {
		App      string                 `json:"app"`
		Revision string                 `json:"revision"`
		Services map[string]serviceInfo `json:"services"`
	}{reg.App, rev, services})
	return b, rev
}

// publishAppRules writes the application's metadata node and adds it to
// each interface's mapping (this agent's part of the set), where they are
// not already so: cluster rules, as Dubbo's own are persistent znodes. An
// error (the rules could not be saved) changed nothing; otherwise undo
// takes back what it wrote (logged when that cannot be saved).
func (s *Server) publishAppRules(reg InstanceRegistration, meta []byte, rev string) (undo func(), err error) {
	now := time.Now().UnixMilli()
	var puts, back []routes.Record
	var gone []string
	// Java Dubbo reads /dubbo/metadata/{app}/{revision}; dubbo-go 3.3's
	// ZooKeeper metadata report reads and writes /dubbo/{app}/{revision}
	// (metadata/report/zookeeper/report.go GetAppMetadata: rootDir + app).
	for _, mpath := range []string{routes.AppMetadataRoot + "/" + reg.App + "/" + rev, "/dubbo/" + reg.App + "/" + rev} {
		if len(s.table.Holders(routes.ZnodeKey(mpath, ""))) == 0 {
			r := routes.Record{Znode: &routes.Znode{Path: mpath, Data: meta, Ctime: now, Mtime: now}}
			puts, gone = append(puts, r), append(gone, r.Key())
		}
	}
	local := s.table.Local()
	for _, iface := range reg.Interfaces {
		path := routes.AppMappingRoot + "/" + iface
		parts := s.table.RulesWithPrefix(routes.ZnodePartsPrefix(path))
		named, version := false, int32(0)
		var own *routes.Znode
		for _, h := range parts {
			z := h.Rec.Znode
			version = max(version, z.Version)
			if z.Part == local {
				own = z
			}
			for _, n := range strings.Split(string(z.Data), ",") {
				named = named || strings.TrimSpace(n) == reg.App
			}
		}
		if named {
			continue
		}
		data, ctime := reg.App, now
		if own != nil && len(own.Data) > 0 {
			data, ctime = string(own.Data)+","+reg.App, own.Ctime
		}
		if len(parts) == 0 {
			version = -1 // a new node starts at version 0
		}
		r := routes.Record{Znode: &routes.Znode{Path: path, Part: local, Data: []byte(data),
			Version: version + 1, Ctime: ctime, Mtime: now}}
		puts = append(puts, r)
		if own != nil {
			was := *own
			was.Version, was.Mtime = r.Znode.Version+1, now
			back = append(back, routes.Record{Znode: &was})
		} else {
			gone = append(gone, r.Key())
		}
	}
	undo = func() {}
	if len(puts) > 0 {
		if _, err := s.host.ApplyRules(puts, nil); err != nil {
			return undo, storeError(fmt.Errorf("saving the application's mapping and metadata: %w", err))
		}
		undo = func() {
			if _, err := s.host.ApplyRules(back, gone); err != nil {
				s.log.Error("a refused instance registration's application mapping and metadata could not be taken back", "app", reg.App, "err", err)
			}
		}
	}
	return undo, nil
}
