package nacos

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/routes"
)

// Configs are cluster rules: KV records in namespace configNamespace keyed
// tenant/group/dataId, so every agent serves the same content once gossip
// has carried it, and a publish is ordered against others by the rules'
// hybrid logical clock. A CAS publish (casMd5) compares with this agent's
// current content and writes in one step on this agent; two agents
// accepting CAS publishes at once both succeed and the later by that clock
// wins everywhere (Nacos' Raft-backed store would refuse one).

const (
	configNamespace = "nacos-config"
	// configTypeNamespace keeps a config's type (Nacos' ConfigType) when
	// not text, beside its content under the same key.
	configTypeNamespace = "nacos-config-type"
	// MaxConfigContent bounds one config's content. Nacos allows 10 MiB;
	// a gossiped rule that large would cost every agent, so the door
	// refuses more than this.
	MaxConfigContent = 64 << 10
	// MaxConfigName bounds dataId and group.
	MaxConfigName = 256
)

type configID struct{ tenant, group, dataID string }

func (id configID) key() string { return id.tenant + "/" + id.group + "/" + id.dataID }

func newConfigID(tenant, group, dataID string) (configID, error) {
	if tenant == defaultNamespace {
		tenant = "" // Nacos' public namespace has the empty id
	}
	if group == "" {
		group = defaultGroup
	}
	id := configID{tenant, group, dataID}
	if dataID == "" {
		return id, fmt.Errorf("dataId is empty")
	}
	for what, v := range map[string]string{"dataId": dataID, "group": group, "tenant": tenant} {
		if len(v) > MaxConfigName || !validConfigName(v) {
			return id, fmt.Errorf("%s %q: use at most %d of letters, digits and -_.:", what, v, MaxConfigName)
		}
	}
	return id, nil
}

// validConfigName is Nacos' ParamUtils.isValid: letters, digits, -_.: only.
func validConfigName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.:", c)) {
			return false
		}
	}
	return true
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// config reads one config's content.
func (s *Server) config(id configID) (string, bool) {
	if content, found, ok := s.appConfig(id); ok || found {
		return content, found // apps.go
	}
	rec, ok := s.table.Rule(routes.KVKey(configNamespace, id.key()))
	if !ok || rec.KV == nil {
		return "", false
	}
	return rec.KV.Value, true
}

func (s *Server) configQuery(c *client, body []byte) (any, error) {
	var req nacoswire.ConfigQueryRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	id, err := newConfigID(req.Tenant, req.Group, req.DataID)
	if err != nil {
		return nil, invalid(err)
	}
	content, found := s.config(id)
	if !found {
		return &nacoswire.ConfigQueryResponse{Response: nacoswire.Fail(nacoswire.ConfigNotFound, "config data not exist")}, nil
	}
	return &nacoswire.ConfigQueryResponse{Response: nacoswire.OK(), Content: content, ContentType: s.configType(id), MD5: md5Hex(content)}, nil
}

// configTypes are Nacos' config types (api ConfigType) and the
// Content-Type its 1.x API answers for each (FileTypeEnum).
var configTypes = map[string]string{"properties": "text/plain;charset=UTF-8", "xml": "application/xml;charset=UTF-8",
	"json": "application/json;charset=UTF-8", "text": "text/plain;charset=UTF-8", "html": "text/html;charset=UTF-8",
	"yaml": "text/plain;charset=UTF-8", "toml": "text/plain;charset=UTF-8", "unset": "text/plain;charset=UTF-8"}

// configType is a config's type: text unless published with another.
func (s *Server) configType(id configID) string {
	if rec, ok := s.table.Rule(routes.KVKey(configTypeNamespace, id.key())); ok && rec.KV != nil {
		return rec.KV.Value
	}
	return "text"
}

// publishConfig writes content of type typ (text when not one of Nacos'
// types, as Nacos), or with casMD5 set only when the current content's
// MD5 is casMD5; ok false when the CAS failed. Content and type are one
// change.
func (s *Server) publishConfig(id configID, content, typ, casMD5 string) (ok bool, err error) {
	if len(content) > MaxConfigContent {
		return false, invalid(fmt.Errorf("content of %d bytes, limit %d", len(content), MaxConfigContent))
	}
	if content == "" {
		return false, invalid(fmt.Errorf("content is empty"))
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if casMD5 != "" {
		cur, found := s.config(id)
		if !found || md5Hex(cur) != casMD5 {
			return false, nil
		}
	}
	puts, ok := s.appConfigWrite(id, content)
	var dels []string
	if !ok {
		puts = []routes.Record{{KV: &routes.KV{Namespace: configNamespace, Key: id.key(), Value: content}}}
		if _, valid := configTypes[typ]; valid && typ != "text" {
			puts = append(puts, routes.Record{KV: &routes.KV{Namespace: configTypeNamespace, Key: id.key(), Value: typ}})
		} else if s.configType(id) != "text" {
			dels = append(dels, routes.KVKey(configTypeNamespace, id.key()))
		}
	}
	if err := s.applyRules(puts, dels); err != nil {
		return false, err
	}
	return true, nil
}

func (s *Server) configPublish(c *client, body []byte) (any, error) {
	var req nacoswire.ConfigPublishRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	id, err := newConfigID(req.Tenant, req.Group, req.DataID)
	if err != nil {
		return nil, invalid(err)
	}
	done, err := s.publishConfig(id, req.Content, req.AdditionMap["type"], req.CasMD5)
	if err != nil {
		return nil, err
	}
	if !done {
		return &nacoswire.Response{ResultCode: nacoswire.CodeFail, ErrorCode: nacoswire.ErrServer,
			Message: "Cas publish fail, server md5 may have changed."}, nil
	}
	r := nacoswire.OK()
	return &r, nil
}

func (s *Server) removeConfig(id configID) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if keys, ok := s.appConfigKeys(id); ok {
		if len(keys) == 0 {
			return nil
		}
		return s.applyRules(nil, keys)
	}
	if _, found := s.config(id); found {
		dels := []string{routes.KVKey(configNamespace, id.key())}
		if s.configType(id) != "text" {
			dels = append(dels, routes.KVKey(configTypeNamespace, id.key()))
		}
		return s.applyRules(nil, dels)
	}
	return nil
}

// applyRules changes rules, turning the agent's refusal into a Nacos
// error: over the rules limit is Nacos' OVER_THRESHOLD.
func (s *Server) applyRules(puts []routes.Record, deletes []string) error {
	if _, err := s.reg.ApplyRules(puts, deletes); err != nil {
		if errors.Is(err, routes.ErrRulesFull) {
			return &codedError{nacoswire.ErrOverThreshold, err.Error()}
		}
		return &codedError{nacoswire.ErrServer, err.Error()}
	}
	return nil
}

func (s *Server) configRemove(c *client, body []byte) (any, error) {
	var req nacoswire.ConfigRemoveRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	id, err := newConfigID(req.Tenant, req.Group, req.DataID)
	if err != nil {
		return nil, invalid(err)
	}
	if err := s.removeConfig(id); err != nil {
		return nil, err
	}
	r := nacoswire.OK()
	return &r, nil
}

// configBatchListen adds or removes listens, and answers which listened
// configs differ from the MD5 the client holds.
func (s *Server) configBatchListen(c *client, body []byte) (any, error) {
	var req nacoswire.ConfigBatchListenRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if len(req.ConfigListenContexts) > MaxSubscriptions {
		return nil, invalid(fmt.Errorf("%d configs in one listen, limit %d", len(req.ConfigListenContexts), MaxSubscriptions))
	}
	ids := make([]configID, len(req.ConfigListenContexts))
	for i, lc := range req.ConfigListenContexts {
		id, err := newConfigID(lc.Tenant, lc.Group, lc.DataID)
		if err != nil {
			return nil, invalid(err)
		}
		ids[i] = id
	}
	s.mu.Lock()
	if c.listens != nil {
		for i, id := range ids {
			if req.Listen && len(c.listens) < MaxSubscriptions {
				// Pushed back as the client named it: its cache is keyed so.
				lc := req.ConfigListenContexts[i]
				c.listens[id.key()] = configID{lc.Tenant, lc.Group, lc.DataID}
			} else if !req.Listen {
				delete(c.listens, id.key())
			}
		}
	}
	s.mu.Unlock()
	resp := &nacoswire.ConfigChangeBatchListenResponse{Response: nacoswire.OK(), ChangedConfigs: []nacoswire.ConfigContext{}}
	if !req.Listen {
		return resp, nil
	}
	for i, lc := range req.ConfigListenContexts {
		content, found := s.config(ids[i])
		// An absent config matches what clients hold for it: Java sends
		// "" and Go the MD5 of "".
		same := (!found && (lc.MD5 == "" || lc.MD5 == md5Hex(""))) || (found && lc.MD5 == md5Hex(content))
		if !same {
			resp.ChangedConfigs = append(resp.ChangedConfigs, nacoswire.ConfigContext{DataID: lc.DataID, Group: lc.Group, Tenant: lc.Tenant})
		}
	}
	return resp, nil
}
