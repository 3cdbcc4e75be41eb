// Package resp reads and writes RESP2, the Redis serialization protocol,
// as a Redis 7.0 server does on its client port: commands arrive as arrays
// of bulk strings ("*2\r\n$4\r\nPING\r\n$1\r\na\r\n") or as inline lines
// ("PING a\r\n", what telnet and redis-cli's pipe mode send); replies are
// simple strings, errors, integers, bulk strings and arrays, with the null
// bulk ($-1) and null array (*-1).
//
// Every read is bounded (Limits): an array longer than MaxArgs, a bulk
// longer than MaxBulk, a command whose bulks add up past MaxCommand, or an
// inline line longer than MaxInline is refused with the error Redis gives
// past its own bounds (ProtocolError: "Protocol error: invalid bulk
// length", ...), after which the server writes it and closes the
// connection, as Redis does. Nothing is allocated for a length before the
// bytes it announces have been read, so a client cannot make the reader
// reserve more than MaxCommand.
//
// The wire format is described in docs/protocols/redis.md.
package resp
