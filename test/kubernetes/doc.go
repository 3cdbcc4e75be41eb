// Package kubernetes checks the manifests in contrib/kubernetes: their
// structure, parsed as YAML, against what docs/kubernetes.md promises. It
// is a module of its own so the YAML parser stays out of the agent's
// dependencies.
package kubernetes
