package agent

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/internal/atomicfile"
)

// keyringFile keeps the gossip keys in the data dir, primary first, so a
// rotation done while the agent ran survives its restart.
const keyringFile = "keyring.json"

// keyring builds memberlist's keyring from the data dir or --encrypt; nil
// means gossip is not encrypted.
func (a *Agent) keyring() (*memberlist.Keyring, error) {
	keys, err := a.loadKeyring()
	if err != nil {
		return nil, err
	}
	if keys == nil && a.cfg.EncryptKey != "" {
		k, err := decodeKey(a.cfg.EncryptKey)
		if err != nil {
			return nil, fmt.Errorf("--encrypt: %w", err)
		}
		keys = [][]byte{k}
	}
	if keys == nil {
		return nil, nil
	}
	kr, err := memberlist.NewKeyring(keys, keys[0])
	if err != nil {
		return nil, fmt.Errorf("gossip keyring: %w", err)
	}
	return kr, a.saveKeyring(kr)
}

// loadKeyring reads the data dir's keyring. A missing file is no keyring
// (--encrypt may seed one); a damaged one (unreadable, not JSON, no keys,
// a key of the wrong form) is an error that stops the start: running on
// without it would turn gossip encryption off, and any keyless agent
// could then join and publish routes. The file is left where it is for
// the operator.
func (a *Agent) loadKeyring() ([][]byte, error) {
	if a.cfg.DataDir == "" {
		return nil, nil
	}
	path := filepath.Join(a.cfg.DataDir, keyringFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var encoded []string
	if err == nil {
		err = json.Unmarshal(b, &encoded)
	}
	if err == nil && len(encoded) == 0 {
		err = errors.New("it holds no keys")
	}
	var keys [][]byte
	for i, e := range encoded {
		if err != nil {
			break
		}
		k, kerr := decodeKey(e)
		if kerr != nil {
			err = fmt.Errorf("key %d: %w", i, kerr)
		}
		keys = append(keys, k)
	}
	if err != nil {
		return nil, fmt.Errorf("gossip keyring %s is damaged (%v); the agent will not start without it, as that would turn gossip encryption off. "+
			"Restore the file (a copy of keyring.json from another member's data dir will do), or remove it and start with --encrypt set to the cluster's current primary key", path, err)
	}
	if a.cfg.EncryptKey != "" {
		a.log.Info("using the keyring in the data dir; --encrypt only seeds a new one", "path", path)
	}
	return keys, nil
}

func (a *Agent) saveKeyring(kr *memberlist.Keyring) error {
	if a.cfg.DataDir == "" || kr == nil {
		return nil
	}
	keys := kr.GetKeys() // primary first
	encoded := make([]string, len(keys))
	for i, k := range keys {
		encoded[i] = base64.StdEncoding.EncodeToString(k)
	}
	b, _ := json.Marshal(encoded)
	return atomicfile.Write(filepath.Join(a.cfg.DataDir, keyringFile), b)
}

// keyOp is a keyring change (or list) run on every member.
type keyOp struct {
	Op  string `json:"op"`
	Key string `json:"key,omitempty"`
}

func (op keyOp) validate() error {
	switch op.Op {
	case "list":
		return nil
	case "install", "use", "remove":
		if _, err := decodeKey(op.Key); err != nil {
			return fmt.Errorf("key: %w", err)
		}
		return nil
	}
	return fmt.Errorf("op %q: use install, use, remove or list", op.Op)
}

// KeyFingerprint names a gossip key without revealing it: "sha256:" and
// the first 8 bytes of the key's SHA-256, in hex. Keyring answers carry
// fingerprints only, so key material never leaves a member's keyring in
// an answer (an HTTP client, a log, a terminal).
func KeyFingerprint(key []byte) string {
	sum := sha256.Sum256(key)
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// runKeyOp is the query handler: it changes this member's keyring and
// persists it, answering the fingerprints of the keys it then holds
// (primary first).
func (a *Agent) runKeyOp(payload []byte) ([]byte, error) {
	var op keyOp
	if err := json.Unmarshal(payload, &op); err != nil {
		return nil, err
	}
	if err := op.validate(); err != nil {
		return nil, err
	}
	kr := a.ring
	if kr == nil {
		return nil, fmt.Errorf("gossip encryption is off on this member (start it with --encrypt)")
	}
	key, _ := decodeKey(op.Key)
	var err error
	switch op.Op {
	case "install":
		err = kr.AddKey(key)
	case "use":
		err = kr.UseKey(key)
	case "remove":
		err = kr.RemoveKey(key)
	}
	if err != nil {
		return nil, err
	}
	if err := a.saveKeyring(kr); err != nil {
		return nil, fmt.Errorf("keyring changed but not saved to the data dir: %w", err)
	}
	keys := kr.GetKeys()
	prints := make([]string, len(keys))
	for i, k := range keys {
		prints[i] = KeyFingerprint(k)
	}
	return json.Marshal(prints)
}

// KeyringResult reports a cluster-wide keyring operation member by member.
type KeyringResult struct {
	Members  int               `json:"members"`
	Failed   map[string]string `json:"failed"`
	Keys     map[string]int    `json:"keys"`    // key fingerprint -> members holding it
	Primary  map[string]int    `json:"primary"` // key fingerprint -> members using it
	Answered []string          `json:"answered"`
}

// changeKeys runs a keyring operation on every alive member, for the HTTP
// door's POST /v1/keys, until ctx ends; an error means op is invalid and
// nothing ran.
func (a *Agent) changeKeys(ctx context.Context, opName, key string) (any, error) {
	op := keyOp{Op: opName, Key: key}
	if err := op.validate(); err != nil {
		return nil, err
	}
	payload, _ := json.Marshal(op)
	answers := a.gossip.Query(ctx, "keyring", payload)
	res := KeyringResult{Failed: map[string]string{}, Keys: map[string]int{}, Primary: map[string]int{}}
	for _, m := range a.gossip.Members() {
		if m.Status != gossip.StatusAlive {
			continue
		}
		res.Members++
		ans, ok := answers[m.Name]
		switch {
		case !ok:
			res.Failed[m.Name] = "no answer within 5s"
		case ans.Error != "":
			res.Failed[m.Name] = ans.Error
		default:
			res.Answered = append(res.Answered, m.Name)
			var keys []string
			_ = json.Unmarshal(ans.Payload, &keys)
			for i, k := range keys {
				res.Keys[k]++
				if i == 0 {
					res.Primary[k]++
				}
			}
		}
	}
	sort.Strings(res.Answered)
	return res, nil
}

// decodeKey reads a base64 gossip key; its errors name no source, as the
// key may come from --encrypt, keyring.json or a keyring change.
func decodeKey(s string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not valid base64 (make one with `namecast keygen`): %v", err)
	}
	if n := len(key); n != 16 && n != 24 && n != 32 {
		return nil, fmt.Errorf("%d bytes; it must be 16, 24 or 32 bytes (make one with `namecast keygen`)", n)
	}
	return key, nil
}
