package nacos

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

// Reading the 1.x and v2 HTTP APIs' parameters as Nacos' builders do
// (naming HttpRequestInstanceBuilder, UtilsAndCommons.parseMetadata,
// common ConvertUtils.toBoolean, core WebUtils.required): what Nacos
// accepts is accepted, what it refuses is refused with its message, and
// nothing is changed by a request the door refuses.

// Nacos' bounds of an instance's weight (api Constants.MIN_WEIGHT_VALUE,
// MAX_WEIGHT_VALUE).
const (
	minWeight = 0.0
	maxWeight = 10000.0
	// MaxMetadata bounds one instance's metadata as sent (bytes).
	MaxMetadata = 16 << 10
)

// required is a parameter Nacos requires (WebUtils.required).
func required(r *http.Request, name string) (string, error) {
	v := r.FormValue(name)
	if v == "" {
		return "", invalid(fmt.Errorf("Param '%s' is required.", name))
	}
	return v, nil
}

// toBool is Nacos' ConvertUtils.toBoolean: y, yes, on, true, t (any case)
// are true, any other text false, and an absent value def.
func toBool(v string, def bool) bool {
	if strings.TrimSpace(v) == "" {
		return def
	}
	switch strings.ToLower(v) {
	case "y", "yes", "on", "true", "t":
		return true
	}
	return false
}

// formCluster is the instance's cluster: clusterName, else cluster.
func formCluster(r *http.Request) string {
	if c := strings.TrimSpace(r.FormValue("clusterName")); c != "" {
		return c
	}
	return r.FormValue("cluster")
}

// formEnabled reads enabled, else Nacos' older spelling enable.
func formEnabled(r *http.Request, def bool) bool {
	if v := r.FormValue("enabled"); strings.TrimSpace(v) != "" {
		return toBool(v, def)
	}
	return toBool(r.FormValue("enable"), def)
}

// parseWeight reads a weight within Nacos' bounds (0 taken and kept: it
// takes the instance out of traffic).
func parseWeight(v string) (float64, error) {
	w, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0, invalid(fmt.Errorf("weight %q is not a number", v))
	}
	if w < minWeight || w > maxWeight {
		return 0, invalid(fmt.Errorf("instance format invalid: The weights range from %.1f to %.1f", minWeight, maxWeight))
	}
	return w, nil
}

// parseMetadata is Nacos' UtilsAndCommons.parseMetadata: a JSON object
// whose numbers and booleans become their text, or k=v,k2=v2.
func parseMetadata(v string) (map[string]string, error) {
	if len(v) > MaxMetadata {
		return nil, invalid(fmt.Errorf("metadata of %d bytes, limit %d", len(v), MaxMetadata))
	}
	out := map[string]string{}
	if strings.TrimSpace(v) == "" {
		return out, nil
	}
	if m, err := metadataJSON(v); err == nil {
		return m, nil
	}
	for _, kv := range javaSplit(v, ",") {
		parts := javaSplit(kv, "=")
		if len(parts) != 2 {
			return nil, invalid(errors.New("metadata format incorrect:" + v))
		}
		out[parts[0]] = parts[1]
	}
	return out, nil
}

// javaSplit is Java's String.split: trailing empty strings are dropped.
func javaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func metadataJSON(v string) (map[string]string, error) {
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil || dec.More() {
		return nil, errors.New("not a JSON object")
	}
	out := make(map[string]string, len(raw))
	for k, x := range raw {
		switch x := x.(type) {
		case string:
			out[k] = x
		case json.Number:
			out[k] = x.String()
		case bool:
			out[k] = strconv.FormatBool(x)
		case nil: // Nacos drops null values
		default:
			return nil, errors.New("a value is not a string, number or boolean")
		}
	}
	return out, nil
}

// formInstance reads an instance from Nacos' register parameters
// (HttpRequestInstanceBuilder).
func formInstance(r *http.Request) (nacoswire.Instance, error) {
	in := nacoswire.Instance{Weight: 1, ClusterName: formCluster(r)}
	var err error
	if in.IP, err = required(r, "ip"); err != nil {
		return in, err
	}
	port, err := required(r, "port")
	if err != nil {
		return in, err
	}
	if in.Port, err = strconv.Atoi(port); err != nil {
		return in, invalid(fmt.Errorf("port %q is not a number", port))
	}
	in.Healthy = toBool(r.FormValue("healthy"), true)
	in.Ephemeral = toBool(r.FormValue("ephemeral"), true)
	in.Enabled = formEnabled(r, true)
	if v := r.FormValue("weight"); v != "" {
		if in.Weight, err = parseWeight(v); err != nil {
			return in, err
		}
	}
	if in.Metadata, err = parseMetadata(r.FormValue("metadata")); err != nil {
		return in, err
	}
	if len(in.Metadata) == 0 {
		in.Metadata = nil
	}
	return in, nil
}
