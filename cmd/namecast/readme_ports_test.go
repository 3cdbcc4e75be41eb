package main

import (
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The agents a README code block starts together run on one machine, so
// no two may listen on the same port: the quickstart's second and third
// agents turned off RocketMQ and ZooKeeper but left the Nacos door on its
// default 8848, which the first agent held, and neither started.
func TestReadmeAgentsInOneBlockShareNoPort(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	for _, block := range codeBlocks(string(b)) {
		held := map[int]string{} // port -> the agent and flag holding it
		agents := 0
		for _, line := range block {
			words, ok := namecastCall(line)
			if !ok || words[0] != "agent" {
				continue
			}
			agents++
			cfg, _, err := parseAgentFlags(words[1:], io.Discard)
			if err != nil {
				t.Errorf("README: `namecast %s`: %v", strings.Join(words, " "), err)
				continue
			}
			addrs := map[string]string{"--bind": cfg.BindAddr}
			for _, d := range cfg.Doors() {
				addrs["--"+d.Name] = *d.Addr
			}
			for flag, addr := range addrs {
				if addr == "off" || addr == "" {
					continue
				}
				_, p, err := net.SplitHostPort(addr)
				port, _ := strconv.Atoi(p)
				if err != nil || port == 0 {
					continue
				}
				ports := map[string]int{flag: port}
				if flag == "--nacos" {
					ports["--nacos gRPC (port + 1000)"] = port + 1000
				}
				for what, port := range ports {
					who := cfg.NodeName + " " + what
					if prev, taken := held[port]; taken {
						t.Errorf("README: agents started together both listen on port %d: %s and %s (give the later one another address, or off)", port, prev, who)
					}
					held[port] = who
				}
			}
		}
		if agents > 1 {
			blocks++
		}
	}
	if blocks == 0 {
		t.Error("README: found no code block starting more than one agent; the quickstart starts three")
	}
}

// codeBlocks returns the fenced code blocks' lines, block by block, with
// comments and outputs left out as splitMarkdown leaves them.
func codeBlocks(md string) [][]string {
	var blocks [][]string
	for i, part := range strings.Split(md, "```") {
		if i%2 == 1 {
			code, _ := splitMarkdown("```" + part + "```")
			blocks = append(blocks, code)
		}
	}
	return blocks
}
