package redis

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"strings"

	"github.com/namecast/namecast/agent/redis/resp"
)

// command is one command the door serves, with Redis 7.0's arity (n:
// exactly n arguments counting the name; -n: at least n).
type command struct {
	arity int
	run   func(s *Server, c *conn, args [][]byte, b []byte) []byte
	// noAuth: allowed before AUTH (AUTH, HELLO, QUIT); subscribed:
	// allowed in subscribed mode; reads: waits for the agent's first
	// sync (awaitReady).
	noAuth, subscribed, reads bool
}

var commands map[string]*command

func init() {
	commands = map[string]*command{
		"ping":    {arity: -1, run: cmdPing, subscribed: true},
		"echo":    {arity: 2, run: cmdEcho},
		"auth":    {arity: -2, run: cmdAuth, noAuth: true},
		"hello":   {arity: -1, run: cmdHello, noAuth: true},
		"select":  {arity: 2, run: cmdSelect},
		"quit":    {arity: -1, run: cmdQuit, noAuth: true, subscribed: true},
		"client":  {arity: -2, run: cmdClient},
		"info":    {arity: -1, run: cmdInfo},
		"command": {arity: -1, run: cmdCommand},

		"hset":    {arity: -4, run: cmdHSet, reads: true},
		"hdel":    {arity: -3, run: cmdHDel, reads: true},
		"hget":    {arity: 3, run: cmdHGet, reads: true},
		"hgetall": {arity: 2, run: cmdHGetAll, reads: true},
		"hkeys":   {arity: 2, run: cmdHKeys, reads: true},
		"hlen":    {arity: 2, run: cmdHLen, reads: true},
		"del":     {arity: -2, run: cmdDel, reads: true},
		"exists":  {arity: -2, run: cmdExists, reads: true},
		"type":    {arity: 2, run: cmdType, reads: true},
		"keys":    {arity: 2, run: cmdKeys, reads: true},
		"scan":    {arity: -2, run: cmdScan, reads: true},

		"publish":      {arity: 3, run: cmdPublish},
		"subscribe":    {arity: -2, run: cmdSubscribe, subscribed: true},
		"psubscribe":   {arity: -2, run: cmdPSubscribe, subscribed: true},
		"unsubscribe":  {arity: -1, run: cmdUnsubscribe, subscribed: true},
		"punsubscribe": {arity: -1, run: cmdPUnsubscribe, subscribed: true},
	}
}

// dispatch answers one command into b, checking what Redis 7.0's
// processCommand checks, in its order: the name, the arity, AUTH, the
// subscribed mode.
func (s *Server) dispatch(c *conn, args [][]byte, b []byte) []byte {
	name := strings.ToLower(string(args[0]))
	cmd := commands[name]
	if cmd == nil {
		s.counts.command("unknown")
		return resp.Err(b, unknownCommand(args))
	}
	s.counts.command(name)
	if cmd.arity > 0 && len(args) != cmd.arity || len(args) < -cmd.arity {
		return resp.Err(b, wrongArgs(name))
	}
	if !c.authed && !cmd.noAuth {
		return resp.Err(b, "NOAUTH Authentication required.")
	}
	if c.subscribedLocked() && !cmd.subscribed {
		return resp.Err(b, fmt.Sprintf("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", fullName(name, args)))
	}
	if cmd.reads {
		c.awaitReady()
	}
	return cmd.run(s, c, args, b)
}

// unknownCommand is Redis 7.0's reply to a command it does not know: the
// name and the first arguments, quoted, up to 128 bytes of them.
func unknownCommand(args [][]byte) string {
	var rest strings.Builder
	for _, a := range args[1:] {
		if rest.Len() >= 128 {
			break
		}
		fmt.Fprintf(&rest, "'%s' ", trunc(a, 128-rest.Len()))
	}
	return fmt.Sprintf("ERR unknown command '%s', with args beginning with: %s", trunc(args[0], 128), rest.String())
}

func trunc(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

func wrongArgs(name string) string {
	return fmt.Sprintf("ERR wrong number of arguments for '%s' command", name)
}

// fullName is a command's name as Redis 7.0 names it in errors: with its
// subcommand for a container command (client|setname).
func fullName(name string, args [][]byte) string {
	if (name == "client" || name == "command") && len(args) > 1 {
		sub := strings.ToLower(string(args[1]))
		if subcommandKnown(name, sub) {
			return name + "|" + sub
		}
	}
	return name
}

func unknownSubcommand(container string, sub []byte) string {
	return fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", trunc(sub, 128), strings.ToUpper(container))
}

func cmdPing(s *Server, c *conn, args [][]byte, b []byte) []byte {
	if len(args) > 2 {
		return resp.Err(b, wrongArgs("ping"))
	}
	if c.subscribedLocked() {
		b = resp.Array(b, 2)
		b = resp.Bulk(b, "pong")
		if len(args) == 2 {
			return resp.Bulk(b, string(args[1]))
		}
		return resp.Bulk(b, "")
	}
	if len(args) == 2 {
		return resp.Bulk(b, string(args[1]))
	}
	return resp.Simple(b, "PONG")
}

func cmdEcho(s *Server, c *conn, args [][]byte, b []byte) []byte {
	return resp.Bulk(b, string(args[1]))
}

func cmdQuit(s *Server, c *conn, args [][]byte, b []byte) []byte {
	c.quit = true
	return resp.Simple(b, "OK")
}

// cmdAuth is AUTH [user] password against Config.Password, the default
// user's, as Redis' requirepass sets it.
func cmdAuth(s *Server, c *conn, args [][]byte, b []byte) []byte {
	if len(args) > 3 {
		return resp.Err(b, "ERR syntax error")
	}
	if s.cfg.Password == "" {
		if len(args) == 2 {
			return resp.Err(b, "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		}
		if string(args[1]) == "default" {
			c.authed = true
			return resp.Simple(b, "OK")
		}
		return resp.Err(b, wrongPass)
	}
	user, pass := []byte("default"), args[1]
	if len(args) == 3 {
		user, pass = args[1], args[2]
	}
	if !bytes.Equal(user, []byte("default")) || subtle.ConstantTimeCompare(pass, []byte(s.cfg.Password)) != 1 {
		s.counts.authFailures.Add(1)
		return resp.Err(b, wrongPass)
	}
	c.authed = true
	return resp.Simple(b, "OK")
}

const wrongPass = "WRONGPASS invalid username-password pair or user is disabled."

// cmdHello refuses HELLO as Redis 5, which has none, refuses it: the door
// speaks RESP2 only, and clients that offer RESP3 (go-redis v9, Jedis 5,
// Lettuce) fall back to it on this error.
func cmdHello(s *Server, c *conn, args [][]byte, b []byte) []byte {
	return resp.Err(b, unknownCommand(args))
}

// cmdSelect accepts the 16 databases of a default Redis: every one is the
// one registry (Dubbo selects db.index when it is not 0).
func cmdSelect(s *Server, c *conn, args [][]byte, b []byte) []byte {
	n, ok := parseInt(args[1])
	if !ok || n < -1<<31 || n > 1<<31-1 {
		return resp.Err(b, errNotInt)
	}
	if n < 0 || n >= 16 {
		return resp.Err(b, "ERR DB index is out of range")
	}
	return resp.Simple(b, "OK")
}

const errNotInt = "ERR value is not an integer or out of range"

func subcommandKnown(container, sub string) bool {
	switch container {
	case "client":
		return sub == "setname" || sub == "getname"
	case "command":
		return sub == "count" || sub == "info" || sub == "docs"
	}
	return false
}

// cmdClient is CLIENT SETNAME and GETNAME; Redis 7.0 knows no SETINFO
// (7.2 added it), and refuses it as this does (Jedis and go-redis ignore
// the error).
func cmdClient(s *Server, c *conn, args [][]byte, b []byte) []byte {
	sub := strings.ToLower(string(args[1]))
	if !subcommandKnown("client", sub) {
		return resp.Err(b, unknownSubcommand("client", args[1]))
	}
	switch sub {
	case "setname":
		if len(args) != 3 {
			return resp.Err(b, wrongArgs("client|setname"))
		}
		for _, ch := range args[2] {
			if ch < '!' || ch > '~' {
				return resp.Err(b, "ERR Client names cannot contain spaces, newlines or special characters.")
			}
		}
		c.name = string(args[2])
		return resp.Simple(b, "OK")
	default: // getname
		if len(args) != 2 {
			return resp.Err(b, wrongArgs("client|getname"))
		}
		if c.name == "" {
			return resp.NullBulk(b)
		}
		return resp.Bulk(b, c.name)
	}
}

// parseInt reads a decimal integer as Redis' string2ll does: an optional
// '-', digits, no spaces, no '+', no leading zeros.
func parseInt(a []byte) (int64, bool) {
	if len(a) == 0 || len(a) > 20 {
		return 0, false
	}
	neg := a[0] == '-'
	d := a
	if neg {
		d = a[1:]
	}
	if len(d) == 0 || len(d) > 1 && d[0] == '0' {
		return 0, false
	}
	var n uint64
	for _, ch := range d {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		n2 := n*10 + uint64(ch-'0')
		if n2 < n || n2/10 != n {
			return 0, false
		}
		n = n2
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}
