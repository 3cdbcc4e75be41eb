package routes

import (
	"encoding/json"
	"maps"
	"net"
	"sort"
	"strconv"
)

// Instance is one instance of an application, read from its znode's
// Curator ServiceInstance JSON (curator-x-discovery's JsonInstanceSerializer,
// as Java Dubbo 3 and dubbo-go write it).
type Instance struct {
	App     string `json:"app"`
	ID      string `json:"id"`
	Address string `json:"address"`
	Port    int    `json:"port"`
	// Revision is the payload's dubbo.metadata.revision: which
	// MetadataInfo (the interfaces it exports) the instance serves.
	Revision string            `json:"revision,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	// Agent is the agent whose door registered it; "" for a persistent
	// znode (a rule, owned by no agent).
	Agent string `json:"agent"`
	// Services are the interfaces of the metadata node for Revision
	// (/dubbo/metadata/{app}/{revision}), when one is registered.
	Services []string `json:"services,omitempty"`
	// Registered is the payload's registrationTimeUTC (ms), 0 if none.
	Registered int64 `json:"registrationTimeUTC,omitempty"`
	// Problem says why the data is not a ServiceInstance; the address and
	// port are then read from the id (host:port) where they can be.
	Problem string `json:"problem,omitempty"`
	stamp   uint64
}

func (in *Instance) clone() Instance {
	c := *in
	c.Metadata = maps.Clone(in.Metadata)
	c.Services = append([]string(nil), in.Services...)
	if len(c.Services) == 0 {
		c.Services = nil
	}
	return c
}

// MetadataRevisionKey is the payload metadata naming an instance's revision.
const MetadataRevisionKey = "dubbo.metadata.revision"

// curatorInstance is the JSON Curator 5.4 writes (ServiceInstance's fields
// in its order, as TestCuratorAppDiscoveryDifferential prints them from
// the real library), with Dubbo's payload, ZookeeperInstance.
type curatorInstance struct {
	Name                string          `json:"name"`
	ID                  string          `json:"id"`
	Address             string          `json:"address"`
	Port                *int            `json:"port"`
	SSLPort             *int            `json:"sslPort"`
	Payload             *curatorPayload `json:"payload"`
	RegistrationTimeUTC int64           `json:"registrationTimeUTC"`
	ServiceType         string          `json:"serviceType"`
	URISpec             *string         `json:"uriSpec"`
}

type curatorPayload struct {
	Class    string                     `json:"@class"`
	ID       string                     `json:"id"`
	Name     string                     `json:"name"`
	Metadata map[string]json.RawMessage `json:"metadata"`
}

// zookeeperInstanceClass is the payload's Jackson type id: Java Dubbo's
// ZookeeperInstance, which dubbo-go writes too.
const zookeeperInstanceClass = "org.apache.dubbo.registry.zookeeper.ZookeeperInstance"

// parseInstance reads instance id of app from its znode data.
func parseInstance(app, id string, data []byte) *Instance {
	in := &Instance{App: app, ID: id}
	var c curatorInstance
	if err := json.Unmarshal(data, &c); err != nil {
		in.Problem = "not a Curator ServiceInstance: " + err.Error()
	} else {
		in.Address = c.Address
		if c.Port != nil {
			in.Port = *c.Port
		}
		in.Registered = c.RegistrationTimeUTC
		if c.Payload != nil && len(c.Payload.Metadata) > 0 {
			in.Metadata = make(map[string]string, len(c.Payload.Metadata))
			for k, raw := range c.Payload.Metadata {
				var s string
				if json.Unmarshal(raw, &s) != nil {
					s = string(raw) // a number or object: its JSON text, as dubbo-go's fmt.Sprint nearly does
				}
				in.Metadata[k] = s
			}
			in.Revision = in.Metadata[MetadataRevisionKey]
		}
	}
	if in.Address == "" || in.Port == 0 {
		if h, p, err := net.SplitHostPort(id); err == nil {
			if in.Address == "" {
				in.Address = h
			}
			if n, err := strconv.Atoi(p); err == nil && in.Port == 0 {
				in.Port = n
			}
		}
	}
	return in
}

// CuratorInstanceJSON is the znode data Curator 5.4 writes for an instance
// of Dubbo's, field for field and in its order: name, id, address, port,
// sslPort null, a ZookeeperInstance payload carrying metadata, the
// registration time (ms), serviceType DYNAMIC, uriSpec null. (5.4 reads
// "enabled" but does not write it.)
func CuratorInstanceJSON(app, id, address string, port int, metadata map[string]string, registeredMs int64) []byte {
	md := make(map[string]json.RawMessage, len(metadata))
	for k, v := range metadata {
		b, _ := json.Marshal(v)
		md[k] = b
	}
	c := curatorInstance{Name: app, ID: id, Address: address, Port: &port,
		Payload:             &curatorPayload{Class: zookeeperInstanceClass, ID: id, Name: app, Metadata: md},
		RegistrationTimeUTC: registeredMs, ServiceType: "DYNAMIC"}
	b, _ := json.Marshal(c) // strings, numbers and maps of them always marshal
	return b
}

// metadataServices lists the interfaces of a MetadataInfo JSON
// ({"app","revision","services":{key:{"name":interface,...}}}), sorted;
// nil when it is not one.
func metadataServices(data []byte) []string {
	var m struct {
		Services map[string]struct {
			Name string `json:"name"`
		} `json:"services"`
	}
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, s := range m.Services {
		if s.Name != "" && !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out
}

// ParseInstance reads instance id of app from its znode data, as the
// application views do, for the agent holding it.
func ParseInstance(app, id string, data []byte, agent string) Instance {
	in := parseInstance(app, id, data)
	in.Agent = agent
	return in.clone()
}
