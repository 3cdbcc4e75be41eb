package client

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
)

// KeyringResult reports a cluster-wide keyring operation member by member.
type KeyringResult struct {
	Members  int               `json:"members"`  // live members asked
	Failed   map[string]string `json:"failed"`   // member → why it did not apply the operation
	Keys     map[string]int    `json:"keys"`     // key fingerprint → members holding it
	Primary  map[string]int    `json:"primary"`  // key fingerprint → members encrypting with it
	Answered []string          `json:"answered"` // members that applied it, sorted
}

// KeyFingerprint is how keyring answers name a key (base64, as namecast
// keygen prints it) without revealing it: "sha256:" and the first 8 bytes
// of the key's SHA-256 in hex, as
// `echo KEY | base64 -d | sha256sum | cut -c1-16` prints them.
func KeyFingerprint(key string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return "", fmt.Errorf("namecast: key is not base64: %w", err)
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:8]), nil
}

// KeyringList asks every member which gossip encryption keys it holds, by
// fingerprint (see KeyFingerprint): answers never carry key material.
func (c *Client) KeyringList(ctx context.Context) (KeyringResult, error) {
	return c.keyring(ctx, "list", "")
}

// KeyringInstall adds key (base64, as namecast keygen prints) to every
// member's keyring, so members can decrypt it before anyone encrypts with it.
func (c *Client) KeyringInstall(ctx context.Context, key string) (KeyringResult, error) {
	return c.keyring(ctx, "install", key)
}

// KeyringUse makes an installed key the one every member encrypts with.
func (c *Client) KeyringUse(ctx context.Context, key string) (KeyringResult, error) {
	return c.keyring(ctx, "use", key)
}

// KeyringRemove drops a key no member encrypts with any more.
func (c *Client) KeyringRemove(ctx context.Context, key string) (KeyringResult, error) {
	return c.keyring(ctx, "remove", key)
}

func (c *Client) keyring(ctx context.Context, op, key string) (KeyringResult, error) {
	in := struct {
		Op  string `json:"op"`
		Key string `json:"key,omitempty"`
	}{op, key}
	var out KeyringResult
	err := c.write(ctx, http.MethodPost, "/v1/keys", nil, in, &out)
	return out, err
}
