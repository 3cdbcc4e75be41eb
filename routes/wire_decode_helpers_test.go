package routes

// DecodeBinaryPart decodes one part with a decoder of its own, whose
// memory the Snapshot then keeps.
func DecodeBinaryPart(b []byte) (Snapshot, error) {
	var d PartDecoder
	return d.Decode(b)
}
