package chaos

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/namecast/namecast/routes"
)

// Config shapes a run. Zero fields take the defaults in brackets.
type Config struct {
	Seed     int64
	Duration time.Duration // of chaos, before faults are lifted
	Step     time.Duration // between client calls [20ms]
	// FaultEvery is the mean time between node and network faults [2s].
	FaultEvery time.Duration
	Loss       float64 // packet loss during the run
	// Duplicate and MaxDelay duplicate packets and delay them (and stream
	// dials) by up to MaxDelay, which also reorders them.
	Duplicate float64
	MaxDelay  time.Duration
	// TTLs makes some registrations expire (1-2 s, not always renewed);
	// only for systems that expire them.
	TTLs bool
	// NoFaults keeps every node running and the network whole: only loss
	// and client calls.
	NoFaults bool
	// MinRunning is the fewest nodes left running [half of them].
	MinRunning int
	Logf       func(format string, args ...any)
}

func (c *Config) defaults(n int) {
	if c.Step <= 0 {
		c.Step = 20 * time.Millisecond
	}
	if c.FaultEvery <= 0 {
		c.FaultEvery = 2 * time.Second
	}
	if c.MinRunning <= 0 {
		c.MinRunning = (n + 1) / 2
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
}

// driver is one run's state.
type driver struct {
	cfg     Config
	sys     System
	m       *Model
	rng     *rand.Rand
	names   []string
	serial  int
	cut     bool // a partition or isolation is in force
	stats   map[string]int
	nextLog time.Time
}

// Run drives sys for cfg.Duration, recording in m what it did, then heals
// the network and lifts loss, duplication and delay. m must already have the running nodes
// Started. It fails only when a call fails in a way no fault explains.
func Run(sys System, m *Model, cfg Config) error {
	cfg.defaults(len(sys.Names()))
	d := &driver{cfg: cfg, sys: sys, m: m, names: sys.Names(), stats: map[string]int{},
		rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed))}
	net := sys.Network()
	net.SetLoss(cfg.Loss)
	net.SetDuplicate(cfg.Duplicate)
	net.SetDelay(0, cfg.MaxDelay)
	start := time.Now()
	end := start.Add(cfg.Duration)
	nextFault := start.Add(d.faultGap())
	d.nextLog = start.Add(10 * time.Second)
	tick := time.NewTicker(cfg.Step)
	defer tick.Stop()
	for now := start; now.Before(end); now = <-tick.C {
		if !cfg.NoFaults && !now.Before(nextFault) {
			if err := d.fault(); err != nil {
				return err
			}
			nextFault = now.Add(d.faultGap())
		}
		if err := d.call(); err != nil {
			return err
		}
		if now.After(d.nextLog) {
			cfg.Logf("chaos: %v in: %s; actions %v", now.Sub(start).Round(time.Second), m.Counts(time.Now()), d.stats)
			d.nextLog = now.Add(10 * time.Second)
		}
	}
	// A last crash, so the end state always has a dead owner whose records
	// every replica must forget.
	if up, _ := d.running(); len(up) > 1 && !cfg.NoFaults {
		i := d.pick(up)
		d.sys.Crash(i)
		d.m.Crashed(d.names[i], d.tables())
		d.stats["crash"]++
	}
	net.Heal()
	net.SetLoss(0)
	net.SetDuplicate(0)
	net.SetDelay(0, 0)
	cfg.Logf("chaos: done after %v: %s; actions %v", time.Since(start).Round(time.Millisecond), m.Counts(time.Now()), d.stats)
	return nil
}

func (d *driver) faultGap() time.Duration {
	return time.Duration(d.rng.Int64N(int64(2*d.cfg.FaultEvery)) + 1)
}

func (d *driver) running() (up, down []int) {
	for i := range d.names {
		if d.sys.Running(i) {
			up = append(up, i)
		} else {
			down = append(down, i)
		}
	}
	return up, down
}

func (d *driver) pick(idx []int) int { return idx[d.rng.IntN(len(idx))] }

// fault crashes, stops, restarts, cuts or heals, at random.
func (d *driver) fault() error {
	up, down := d.running()
	switch r := d.rng.IntN(12); {
	case r < 3 && len(up) > d.cfg.MinRunning:
		i := d.pick(up)
		d.sys.Crash(i)
		d.m.Crashed(d.names[i], d.tables())
		d.stats["crash"]++
	case r < 4 && len(up) > d.cfg.MinRunning:
		i := d.pick(up)
		d.sys.Leave(i)
		d.m.Crashed(d.names[i], d.tables())
		d.stats["leave"]++
	case r < 7 && len(down) > 0:
		i := d.pick(down)
		if err := d.sys.Restart(i); err != nil {
			return fmt.Errorf("restarting %s: %w", d.names[i], err)
		}
		d.m.Started(d.names[i])
		d.stats["restart"]++
	case r < 9 && !d.cut:
		a, b := d.split()
		d.sys.Network().Partition(a, b)
		d.cut = true
		d.stats["partition"]++
	case r < 10 && !d.cut:
		d.sys.Network().Isolate(d.names[d.rng.IntN(len(d.names))])
		d.cut = true
		d.stats["isolate"]++
	case d.cut:
		d.sys.Network().Heal()
		d.cut = false
		d.stats["heal"]++
	}
	return nil
}

// split divides the nodes in two groups of at least one.
func (d *driver) split() (a, b []string) {
	perm := d.rng.Perm(len(d.names))
	k := 1 + d.rng.IntN(len(d.names)/2)
	for j, i := range perm {
		if j < k {
			a = append(a, d.names[i])
		} else {
			b = append(b, d.names[i])
		}
	}
	return a, b
}

// tables are the running nodes' tables.
func (d *driver) tables() []*routes.Table {
	var out []*routes.Table
	for _, r := range d.sys.Replicas() {
		out = append(out, r.Table)
	}
	return out
}

// call makes one client call to a random running node.
func (d *driver) call() error {
	up, _ := d.running()
	if len(up) == 0 {
		return nil
	}
	i := d.pick(up)
	name := d.names[i]
	switch r := d.rng.IntN(100); {
	case r < 35:
		return d.register(i, d.newURL(), "register url")
	case r < 50:
		return d.register(i, d.newBroker(), "register broker")
	case r < 70:
		regs := d.m.Registrations(name, time.Now())
		if len(regs) == 0 {
			return nil
		}
		return d.register(i, d.renew(regs[d.rng.IntN(len(regs))]), "renew")
	case r < 90:
		regs := d.m.Registrations(name, time.Now())
		if len(regs) == 0 {
			return nil
		}
		return d.unregister(i, regs[d.rng.IntN(len(regs))], "unregister")
	case r < 96:
		return d.register(i, d.newRule(), "rule put")
	default:
		rules := d.m.LiveRules()
		if len(rules) == 0 {
			return nil
		}
		return d.unregister(i, rules[d.rng.IntN(len(rules))], "rule delete")
	}
}

func (d *driver) register(i int, reg Registration, what string) error {
	start := time.Now()
	if err := d.sys.Register(i, reg); err != nil {
		return fmt.Errorf("%s %s on %s: %w", what, reg, d.names[i], err)
	}
	d.stats[what]++
	return d.m.Registered(d.names[i], reg, start)
}

func (d *driver) unregister(i int, reg Registration, what string) error {
	ok, err := d.sys.Unregister(i, reg)
	if err != nil {
		return fmt.Errorf("%s %s on %s: %w", what, reg, d.names[i], err)
	}
	d.stats[what]++
	d.m.Unregistered(d.names[i], reg, ok, time.Now())
	return nil
}

func (d *driver) ttl() time.Duration {
	if !d.cfg.TTLs || d.rng.IntN(10) >= 3 {
		return 0
	}
	return time.Second + time.Duration(d.rng.Int64N(int64(time.Second)))
}

func (d *driver) newURL() Registration {
	d.serial++
	n := d.serial
	return Registration{
		URL: fmt.Sprintf("dubbo://10.%d.%d.%d:20880/com.chaos.Svc%d?side=provider&version=1.%d", n/62500%250, n/250%250, n%250, n%16, n%3),
		TTL: d.ttl(),
	}
}

func (d *driver) newBroker() Registration {
	d.serial++
	n := d.serial
	return Registration{Cluster: "chaos", BrokerName: fmt.Sprintf("b%d", n), Addr: fmt.Sprintf("10.200.%d.%d:10911", n/250%250, n%250),
		Topics: d.topics(), TTL: d.ttl()}
}

func (d *driver) topics() []string {
	var ts []string
	for _, k := range d.rng.Perm(24)[:1+d.rng.IntN(3)] {
		ts = append(ts, fmt.Sprintf("Topic%d", k))
	}
	return ts
}

// renew registers the same thing again, with a new TTL (or none) and, for
// a master, perhaps another set of topics.
func (d *driver) renew(reg Registration) Registration {
	reg.TTL = d.ttl()
	if reg.URL == "" && reg.BrokerID == 0 && d.rng.IntN(2) == 0 {
		reg.Topics = d.topics()
	}
	return reg
}

func (d *driver) newRule() Registration {
	d.serial++
	n := d.serial
	return Registration{URL: fmt.Sprintf("route://0.0.0.0/com.chaos.Svc%d?category=routers&dynamic=false&rule=r%d", n%16, n)}
}
