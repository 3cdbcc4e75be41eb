package client

import (
	"context"
	"net/http"
)

// KeyringResult reports a cluster-wide keyring operation member by member.
type KeyringResult struct {
	Members  int               `json:"members"`  // live members asked
	Failed   map[string]string `json:"failed"`   // member → why it did not apply the operation
	Keys     map[string]int    `json:"keys"`     // key → members holding it
	Primary  map[string]int    `json:"primary"`  // key → members encrypting with it
	Answered []string          `json:"answered"` // members that applied it, sorted
}

// KeyringList asks every member which gossip encryption keys it holds.
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
