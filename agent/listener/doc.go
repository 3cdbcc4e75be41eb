// Package listener holds an in-memory listener (Memory) that tests hand
// the agent's doors (agent.Config.Listen), so a door serves without a
// port. What a door does with the connections it accepts is package
// conns'.
package listener
