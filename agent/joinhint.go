package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/namecast/namecast/gossip"
)

// join joins the cluster through addrs; when none answered, it says which
// of them is an HTTP port (an easy mistake: an agent has both), and for a
// namecast agent's HTTP API, the gossip address to join instead. memberlist
// alone waits for its TCP timeout and reports a read timeout, or "invalid
// msgType (72)": 'H', the first byte of an HTTP server's answer.
func join(g *gossip.Gossip, addrs []string) (int, error) {
	n, err := g.Join(addrs)
	if n > 0 || err == nil {
		return n, err
	}
	err = oneLine(err)
	var hints []string
	for _, addr := range addrs {
		if h := httpPortHint(addr); h != "" {
			hints = append(hints, h)
		}
	}
	if len(hints) == 0 {
		return n, err
	}
	return n, fmt.Errorf("%w: %s", err, strings.Join(hints, "; "))
}

// httpPortHint asks addr for an HTTP answer; "" if it gives none.
func httpPortHint(addr string) string {
	cl := http.Client{Timeout: time.Second}
	resp, err := cl.Get("http://" + addr + "/v1/agent")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var info struct {
		GossipAddr string `json:"gossipAddr"`
	}
	if json.NewDecoder(resp.Body).Decode(&info) == nil && info.GossipAddr != "" {
		return fmt.Sprintf("%s looks like an HTTP port: it is a namecast agent's HTTP API, whose gossip address (its --bind) is %s", addr, info.GossipAddr)
	}
	return fmt.Sprintf("%s looks like an HTTP port: join an agent's gossip address (its --bind, port 7946 by default), not its --http", addr)
}

// oneLine is memberlist's list of join errors (a go-multierror, which
// prints itself as "1 error occurred:\n\t* ...\n\n") as one line, for
// the command line, the log and an HTTP answer.
func oneLine(err error) error {
	list, ok := err.(interface{ WrappedErrors() []error })
	if !ok {
		return err
	}
	var parts []string
	for _, e := range list.WrappedErrors() {
		parts = append(parts, e.Error())
	}
	if len(parts) == 0 {
		return err
	}
	return errors.New(strings.Join(parts, "; "))
}
