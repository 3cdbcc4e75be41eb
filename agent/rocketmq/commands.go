package rocketmq

import (
	"context"
	"time"

	"github.com/namecast/namecast/agent/command"
	"github.com/namecast/namecast/routes"
)

// Admin writes (wipe/add write perm, delete topic) reach the agents that
// own the records as commands (package command): key {target agent}/{op}/
// {broker name or topic}, the parameter the permission change or the
// topic's cluster. A wipe then an add not yet run leaves the add.
const (
	cmdNamespace = "~namecast.cmd"
	commandTTL   = 10 * time.Minute
	// commandPoll spaces the scans: the table changes with every
	// registration anywhere, commands are rare.
	commandPoll = 50 * time.Millisecond

	opPerm        = "perm"
	opDeleteTopic = "deltopic"
	permWipe      = "wipe"
	permAdd       = "add"
)

// sendCommands addresses one command to each of targets but this agent.
func (s *Server) sendCommands(targets []string, op, subject, param string) {
	self := s.reg.Table().Local()
	now := time.Now()
	var puts []routes.Record
	seen := map[string]bool{self: true}
	for _, t := range targets {
		if seen[t] {
			continue
		}
		seen[t] = true
		puts = append(puts, command.Rule(cmdNamespace, t, op, subject, param, now))
	}
	if len(puts) > 0 {
		s.reg.ApplyRules(puts, nil)
	}
}

// sendCommandsFor addresses a command to every agent holding a record of
// a group in bds: a broker registered on several agents has records on
// each, and BrokerData.Origins names one per id.
func (s *Server) sendCommandsFor(bds []routes.BrokerData, op, subject, param string) {
	var targets []string
	for _, bd := range bds {
		targets = append(targets, s.reg.Table().BrokerHolders(bd.BrokerName)...)
	}
	s.sendCommands(targets, op, subject, param)
}

// commandWake bounds how long the loop waits for a table change, so that
// commands of a gone target are collected in a quiet cluster too.
const commandWake = time.Minute

func (s *Server) commandLoop() {
	table := s.reg.Table()
	var index uint64
	for {
		ctx, cancel := context.WithTimeout(s.ctx, commandWake)
		index = table.Wait(ctx, index)
		cancel()
		if s.ctx.Err() != nil {
			return
		}
		s.runCommands()
		s.syncGroups()
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(commandPoll):
		}
	}
}

// runCommands runs the commands addressed to this agent and deletes them,
// with any command of a gone target this agent has seen for commandTTL.
func (s *Server) runCommands() { s.commands.Collect(s.reg.Table(), s.now()) }

// newInbox reads the commands for this agent.
func (s *Server) newInbox() *command.Inbox {
	return &command.Inbox{Namespace: cmdNamespace, TTL: commandTTL, Run: s.runCommand,
		Remove: func(keys []string) { s.reg.ApplyRules(nil, keys) }}
}

// runCommand runs one admin write on this agent's records; it is done
// whatever it changed.
func (s *Server) runCommand(c command.Command) bool {
	op, subject, param := c.Op, c.Subject, c.Param
	switch op {
	case opPerm:
		n := s.changeWritePermLocal(subject, param == permWipe)
		s.log.Info("applied a write-permission change sent from another agent", "broker", subject, "change", param, "topics", n)
	case opDeleteTopic:
		n := s.deleteTopicLocal(subject, param)
		s.log.Info("deleted a topic as asked by another agent", "topic", subject, "cluster", param, "brokers", n)
	default:
		s.log.Warn("ignoring an unknown command (is a newer agent in the cluster?)", "op", op, "subject", subject)
	}
	return true
}
