package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"

	"github.com/namecast/namecast/client"
)

// keySize picks AES-256; memberlist's keyring also takes 16 and 24 bytes.
const keySize = 32

func runKeygen(c *cli, args []string) error {
	fs := newFlagSet("keygen", "", "Prints a new random 32-byte key, base64-encoded, for the agent's\n--encrypt flag (gossip encryption with AES-256-GCM) or `namecast keys install`.")
	if err := c.noArgs(fs, args); err != nil {
		return err
	}
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("reading random bytes: %w", err)
	}
	_, err := fmt.Fprintln(c.stdout, base64.StdEncoding.EncodeToString(key))
	return err
}

const keysHelp = `Manages the gossip encryption keyring of every live member. To rotate the
key without downtime: install the new key everywhere, use it, then remove the
old one once every member uses the new key.

  namecast keys list            (keys by fingerprint: the first 16 hex digits
                                of the key's SHA-256, never the key itself)
  namecast keys install KEY     (a key from namecast keygen)
  namecast keys use KEY
  namecast keys remove KEY

The command fails if any live member did not apply the change.`

func runKeys(c *cli, args []string) error {
	return c.dispatch("keys", keysHelp, []subcommand{
		{"list", keyCommand("list", nil)},
		{"install", keyCommand("install", (*client.Client).KeyringInstall)},
		{"use", keyCommand("use", (*client.Client).KeyringUse)},
		{"remove", keyCommand("remove", (*client.Client).KeyringRemove)},
	}, args)
}

type keyringOp func(*client.Client, context.Context, string) (client.KeyringResult, error)

// keyCommand runs one keyring operation; op is nil for list, which takes no
// KEY.
func keyCommand(name string, op keyringOp) func(*cli, []string) error {
	return func(c *cli, args []string) error {
		var f clientFlags
		synopsis, want := "KEY [flags]", 1
		if op == nil {
			synopsis, want = "[flags]", 0
		}
		fs := newFlagSet("keys "+name, synopsis, keysHelp)
		f.register(fs)
		pos, err := c.parse(fs, args)
		if err != nil {
			return err
		}
		switch {
		case len(pos) > want && want == 0:
			return usagef("unexpected argument %q: keys %s takes flags only", pos[0], name)
		case len(pos) != want:
			return usagef("keys %s wants one KEY, got %d arguments", name, len(pos))
		}
		cl, err := c.client(&f)
		if err != nil {
			return err
		}
		ctx, cancel := c.context()
		defer cancel()
		var res client.KeyringResult
		if op == nil {
			res, err = cl.KeyringList(ctx)
		} else {
			res, err = op(cl, ctx, pos[0])
		}
		if err != nil {
			return err
		}
		if f.json {
			err = printJSON(c.stdout, res)
		} else {
			fp := ""
			if op != nil {
				fp, _ = client.KeyFingerprint(pos[0])
			}
			printKeyring(c, name, fp, res)
		}
		if err == nil && len(res.Failed) > 0 {
			err = fmt.Errorf("%d of %d members did not %s the key", len(res.Failed), res.Members, name)
		}
		return err
	}
}

func printKeyring(c *cli, name, fingerprint string, res client.KeyringResult) {
	if name == "list" {
		t := newTable(c.stdout, "FINGERPRINT", "MEMBERS", "PRIMARY")
		for _, k := range slices.Sorted(maps.Keys(res.Keys)) {
			t.row(k, fmt.Sprintf("%d/%d", res.Keys[k], res.Members), res.Primary[k])
		}
		t.flush()
	} else {
		if fingerprint != "" {
			name += " " + fingerprint
		}
		fmt.Fprintf(c.stdout, "%s: %d of %d members\n", name, len(res.Answered), res.Members)
	}
	for _, m := range slices.Sorted(maps.Keys(res.Failed)) {
		fmt.Fprintf(c.stderr, "member %s: %s\n", m, res.Failed[m])
	}
}
