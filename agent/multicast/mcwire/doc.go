// Package mcwire is the text of Dubbo's multicast registry: one UDP
// datagram per message, "register <url>", "unregister <url>",
// "subscribe <url>" or "unsubscribe <url>", the URL in Dubbo's full
// string form, and a newline (docs/protocols/multicast.md).
//
// Parse reads a datagram as Dubbo's MulticastRegistry receiver does: the
// first ReceiveBuffer bytes, trimmed, up to the first newline, trimmed
// again; the verb is matched by prefix, "register" before "unregister"
// before "subscribe", and what follows it, trimmed, is the URL. Parse
// differs where Dubbo would act on garbage: it refuses a URL that does
// not parse (package dubbo) and a first line the receive buffer cut,
// which Dubbo would take as a shorter URL. Format writes what Dubbo's
// sender writes.
//
// Both are pure functions of their input, safe from any goroutine.
package mcwire
