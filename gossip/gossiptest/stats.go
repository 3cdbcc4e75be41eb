package gossiptest

import "sync/atomic"

// Stats counts one transport's traffic. Packets are counted by the node
// that sent them except PacketsReceived and PacketBytesReceived; a packet
// lost anywhere (loss, a cut link, a full or shut-down receiver) counts in
// its sender's PacketsDropped.
type Stats struct {
	PacketsSent         uint64 // WriteTo calls, lost or not
	PacketBytesSent     uint64
	PacketsDropped      uint64 // of those sent, copies never delivered
	PacketsDuplicated   uint64 // of those sent, extra copies made
	PacketsReceived     uint64 // copies handed to this node's memberlist
	PacketBytesReceived uint64
	StreamsDialed       uint64 // outgoing streams opened
	StreamsRefused      uint64 // outgoing dials that failed
	StreamsAccepted     uint64 // incoming streams handed to memberlist
	StreamBytesSent     uint64
	StreamBytesReceived uint64
}

// BytesSent is the node's outgoing bandwidth use, packets and streams.
func (s Stats) BytesSent() uint64 { return s.PacketBytesSent + s.StreamBytesSent }

// BytesReceived is the node's incoming bandwidth use, packets and streams.
func (s Stats) BytesReceived() uint64 { return s.PacketBytesReceived + s.StreamBytesReceived }

func (s Stats) add(o Stats) Stats {
	return Stats{
		PacketsSent:         s.PacketsSent + o.PacketsSent,
		PacketBytesSent:     s.PacketBytesSent + o.PacketBytesSent,
		PacketsDropped:      s.PacketsDropped + o.PacketsDropped,
		PacketsDuplicated:   s.PacketsDuplicated + o.PacketsDuplicated,
		PacketsReceived:     s.PacketsReceived + o.PacketsReceived,
		PacketBytesReceived: s.PacketBytesReceived + o.PacketBytesReceived,
		StreamsDialed:       s.StreamsDialed + o.StreamsDialed,
		StreamsRefused:      s.StreamsRefused + o.StreamsRefused,
		StreamsAccepted:     s.StreamsAccepted + o.StreamsAccepted,
		StreamBytesSent:     s.StreamBytesSent + o.StreamBytesSent,
		StreamBytesReceived: s.StreamBytesReceived + o.StreamBytesReceived,
	}
}

// counters is the live, lock-free form of Stats.
type counters struct {
	packetsSent, packetBytesSent         atomic.Uint64
	packetsDropped, packetsDuplicated    atomic.Uint64
	packetsReceived, packetBytesReceived atomic.Uint64
	streamsDialed, streamsRefused        atomic.Uint64
	streamsAccepted                      atomic.Uint64
	streamBytesSent, streamBytesReceived atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{
		PacketsSent:         c.packetsSent.Load(),
		PacketBytesSent:     c.packetBytesSent.Load(),
		PacketsDropped:      c.packetsDropped.Load(),
		PacketsDuplicated:   c.packetsDuplicated.Load(),
		PacketsReceived:     c.packetsReceived.Load(),
		PacketBytesReceived: c.packetBytesReceived.Load(),
		StreamsDialed:       c.streamsDialed.Load(),
		StreamsRefused:      c.streamsRefused.Load(),
		StreamsAccepted:     c.streamsAccepted.Load(),
		StreamBytesSent:     c.streamBytesSent.Load(),
		StreamBytesReceived: c.streamBytesReceived.Load(),
	}
}
