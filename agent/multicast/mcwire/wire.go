package mcwire

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/namecast/namecast/dubbo"
)

// ReceiveBuffer is the size of the buffer every Dubbo multicast receiver
// reads a datagram into: what lies past it is never seen.
const ReceiveBuffer = 2048

// Verb is what a message asks.
type Verb string

// The four verbs, as Dubbo's registry constants spell them.
const (
	Register    Verb = "register"
	Unregister  Verb = "unregister"
	Subscribe   Verb = "subscribe"
	Unsubscribe Verb = "unsubscribe"
)

// Message is one datagram's meaning.
type Message struct {
	Verb Verb
	// URL is the URL as parsed; its String is Dubbo's full form.
	URL dubbo.URL
}

// Why Parse refuses a datagram; each error wraps one of these, so that a
// receiver can count refusals by kind.
var (
	// ErrVerb: the first line starts with no verb Dubbo acts on.
	ErrVerb = errors.New("no verb")
	// ErrCut: the first line does not end within ReceiveBuffer bytes, so
	// every Dubbo receiver read a cut URL.
	ErrCut = errors.New("first line cut by the receive buffer")
	// ErrURL: the text after the verb is not a Dubbo URL.
	ErrURL = errors.New("bad url")
)

// Parse reads one datagram (see the package comment).
func Parse(datagram []byte) (Message, error) {
	b := datagram
	if len(b) > ReceiveBuffer {
		if bytes.IndexByte(b[:ReceiveBuffer], '\n') < 0 {
			return Message{}, fmt.Errorf("%w: a datagram of %d bytes has no newline in its first %d", ErrCut, len(b), ReceiveBuffer)
		}
		b = b[:ReceiveBuffer]
	}
	msg := trim(string(b))
	if i := strings.IndexByte(msg, '\n'); i > 0 {
		msg = trim(msg[:i])
	}
	verb, rest, ok := cutVerb(msg)
	if !ok {
		return Message{}, fmt.Errorf("%w: %q", ErrVerb, clip(msg))
	}
	raw := trim(rest)
	u, err := dubbo.Parse(raw)
	if err != nil {
		return Message{}, fmt.Errorf("%w: %s %q: %v", ErrURL, verb, clip(raw), err)
	}
	return Message{Verb: verb, URL: u}, nil
}

// cutVerb matches the verb by prefix, in the order Dubbo's receiver tests
// them ("unsubscribe", which it ignores, last).
func cutVerb(msg string) (Verb, string, bool) {
	for _, v := range []Verb{Register, Unregister, Subscribe, Unsubscribe} {
		if rest, ok := strings.CutPrefix(msg, string(v)); ok {
			return v, rest, true
		}
	}
	return "", "", false
}

// trim is Java's String.trim: every leading and trailing character at or
// below ' ' goes (NULs of an unfilled buffer among them).
func trim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

// clip bounds what an error quotes of a datagram.
func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// Format is the datagram Dubbo sends for verb and url: "verb url\n".
func Format(verb Verb, url dubbo.URL) []byte {
	s := url.String()
	b := make([]byte, 0, len(verb)+len(s)+2)
	b = append(b, verb...)
	b = append(b, ' ')
	b = append(b, s...)
	return append(b, '\n')
}

// Fits reports whether a message for url arrives whole at a Dubbo
// receiver: within ReceiveBuffer with its verb and newline.
func Fits(verb Verb, url dubbo.URL) bool {
	return len(verb)+1+len(url.String())+1 <= ReceiveBuffer
}
