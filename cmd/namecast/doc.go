// Command namecast is the namecast binary: `namecast agent` runs an agent,
// and every other command is a client of the local agent's HTTP API (built
// on package client), printing aligned tables or, with --json, JSON.
//
// Exit codes: 0 success, 1 the call failed (agent unreachable or refused),
// 2 bad usage, 130 interrupted.
package main
