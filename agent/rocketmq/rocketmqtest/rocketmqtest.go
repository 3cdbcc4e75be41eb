// Package rocketmqtest talks to a NameServer the way RocketMQ brokers and
// tools do, for tests and examples that have no Java broker: a pipelining
// remoting client, and the exact REGISTER_BROKER / UNREGISTER_BROKER frames
// Java 4.9 and 5.x brokers send.
//
// A Client is safe for concurrent use: requests may be pipelined, and each
// Call waits for the response with its own opaque.
package rocketmqtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
)

// Client is one remoting connection.
type Client struct {
	nc      net.Conn
	wmu     sync.Mutex
	opaque  atomic.Int32
	mu      sync.Mutex
	pending map[int32]chan *remoting.Command
	err     error
	done    chan struct{}
}

// Dial connects to a NameServer.
func Dial(addr string) (*Client, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return NewClient(nc), nil
}

// NewClient talks over nc, a connection to a NameServer dialled another
// way (from a chosen local address, say); Close closes it.
func NewClient(nc net.Conn) *Client {
	c := &Client{nc: nc, pending: map[int32]chan *remoting.Command{}, done: make(chan struct{})}
	go c.readLoop()
	return c
}

func (c *Client) readLoop() {
	dec := remoting.NewDecoder(bufio.NewReader(c.nc), 0)
	var err error
	for {
		var cmd *remoting.Command
		if cmd, err = dec.Decode(); err != nil {
			break
		}
		c.mu.Lock()
		ch := c.pending[cmd.Opaque]
		delete(c.pending, cmd.Opaque)
		c.mu.Unlock()
		if ch != nil {
			ch <- cmd
		}
	}
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	close(c.done)
}

// Send writes req with the next opaque and returns a channel that receives
// its response (never, for oneway requests).
func (c *Client) Send(req *remoting.Command) (opaque int32, resp <-chan *remoting.Command, err error) {
	req.Opaque = c.opaque.Add(1)
	ch := make(chan *remoting.Command, 1)
	if !req.IsOneway() {
		c.mu.Lock()
		c.pending[req.Opaque] = ch
		c.mu.Unlock()
	}
	b, err := remoting.AppendFrame(nil, req)
	if err != nil {
		return 0, nil, err
	}
	if err := c.WriteRaw(b); err != nil {
		return 0, nil, err
	}
	return req.Opaque, ch, nil
}

// WriteRaw writes bytes as they are, for malformed-input tests.
func (c *Client) WriteRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.nc.Write(b)
	return err
}

// Call sends req and waits for its response.
func (c *Client) Call(ctx context.Context, req *remoting.Command) (*remoting.Command, error) {
	_, ch, err := c.Send(req)
	if err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-c.done:
		return nil, fmt.Errorf("connection closed before the response to code %d: %w", req.Code, c.Err())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Do is Call with a 5 s timeout and a new request.
func (c *Client) Do(code int, ext map[string]string, body []byte) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Call(ctx, remoting.NewRequest(code, ext, body))
}

// Closed is closed when the connection ends, whoever ended it.
func (c *Client) Closed() <-chan struct{} { return c.done }

// Err is why the connection ended (nil while it is open).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection and waits for its reader.
func (c *Client) Close() error {
	err := c.nc.Close()
	<-c.done
	return err
}

// Broker describes a broker to register, as its Java process would.
type Broker struct {
	Cluster, Name string
	ID            int64
	Addr, HAAddr  string
	Zone          string // sent as __ZONE_NAME when set
	Topics        map[string]remoting.TopicConfig
	DataVersion   remoting.DataVersion
	// Version is the broker's protocol version: remoting.VersionCurrent
	// (5.x) when 0; 409 for 4.9.8.
	Version int
	// Compressed sends the topic table as a zlib stream (compressedRegister).
	Compressed bool
	// FilterServers is the body's filterServerList.
	FilterServers []string
	// ActingMaster is 5.x's enableActingMaster.
	ActingMaster bool
	// HeartbeatTimeout, when set, is sent as heartbeatTimeoutMillis.
	HeartbeatTimeout time.Duration
	// RawBody, when set, is sent as the registration's body instead of
	// the encoding of Topics, DataVersion and FilterServers: a body as a
	// Java broker writes it, bare integer keys and all.
	RawBody []byte
}

// Topic is a read/write topic config with n queues, as brokers create them.
func Topic(name string, n int) remoting.TopicConfig {
	return remoting.TopicConfig{TopicName: name, ReadQueueNums: n, WriteQueueNums: n, Perm: remoting.PermRead | remoting.PermWrite,
		TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{}}
}

func (b *Broker) version() int {
	if b.Version == 0 {
		return remoting.VersionCurrent
	}
	return b.Version
}

// RegisterRequest builds REGISTER_BROKER as the broker's Java version sends
// it: 4.x puts the real compressed flag in the header; 5.x always says
// false and adds enableActingMaster (BrokerOuterAPI.registerBrokerAll).
func (b *Broker) RegisterRequest() (*remoting.Command, error) {
	if b.Name == "" || b.Addr == "" {
		return nil, errors.New("rocketmqtest: a broker needs at least Name and Addr")
	}
	body, err := remoting.EncodeRegisterBrokerBody(&remoting.RegisterBrokerBody{DataVersion: b.DataVersion, Topics: b.Topics,
		FilterServers: append([]string{}, b.FilterServers...)}, b.Compressed, b.version())
	if err != nil {
		return nil, err
	}
	if b.RawBody != nil {
		body = b.RawBody
	}
	ext := b.identity()
	ext["haServerAddr"] = b.HAAddr
	ext["bodyCrc32"] = strconv.Itoa(int(remoting.BodyCRC32(body)))
	ext["compressed"] = strconv.FormatBool(b.Compressed)
	if b.version() >= remoting.VersionStaticTopics {
		ext["compressed"] = "false"
		ext["enableActingMaster"] = strconv.FormatBool(b.ActingMaster)
	}
	if b.HeartbeatTimeout > 0 {
		ext["heartbeatTimeoutMillis"] = strconv.FormatInt(b.HeartbeatTimeout.Milliseconds(), 10)
	}
	if b.Zone != "" {
		ext["__ZONE_NAME"] = b.Zone
	}
	req := remoting.NewRequest(remoting.RegisterBroker, ext, body)
	req.Version = b.version()
	return req, nil
}

// UnregisterRequest builds UNREGISTER_BROKER, sent on broker shutdown.
func (b *Broker) UnregisterRequest() *remoting.Command {
	req := remoting.NewRequest(remoting.UnregisterBroker, b.identity(), nil)
	req.Version = b.version()
	return req
}

// HeartbeatRequest builds the oneway BROKER_HEARTBEAT (904) of 5.x.
func (b *Broker) HeartbeatRequest() *remoting.Command {
	req := remoting.NewRequest(remoting.BrokerHeartbeat, b.identity(), nil)
	req.Version = b.version()
	req.Flag = remoting.FlagOneway
	return req
}

func (b *Broker) identity() map[string]string {
	return map[string]string{"brokerName": b.Name, "brokerAddr": b.Addr, "clusterName": b.Cluster,
		"brokerId": strconv.FormatInt(b.ID, 10)}
}

// Register sends b's registration over c and checks it succeeded.
func (c *Client) Register(b *Broker) (*remoting.Command, error) {
	req, err := b.RegisterRequest()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Call(ctx, req)
	if err == nil && resp.Code != remoting.Success {
		err = fmt.Errorf("register %s/%d: code %d %q", b.Name, b.ID, resp.Code, resp.Remark)
	}
	return resp, err
}

// Unregister sends b's unregistration over c.
func (c *Client) Unregister(b *Broker) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Call(ctx, b.UnregisterRequest())
	if err == nil && resp.Code != remoting.Success {
		err = fmt.Errorf("unregister %s/%d: code %d %q", b.Name, b.ID, resp.Code, resp.Remark)
	}
	return err
}

// Route asks for a topic's route with the given client version (317 is Go
// client v2.1.2, 479 a 5.x Java client) and returns the response.
func (c *Client) Route(topic string, version int) (*remoting.Command, error) {
	req := remoting.NewRequest(remoting.GetRouteInfoByTopic, map[string]string{"topic": topic}, nil)
	req.Version = version
	req.Language = remoting.LanguageGo
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Call(ctx, req)
}
