package sealed

import (
	"encoding/json"
	"testing"
)

// Every change of one byte of a sealed file is found, including those
// that leave it valid JSON; the sealed file still decodes as before;
// an unsealed file of the caller's old format passes.
func TestCheckFindsEveryChangedByte(t *testing.T) {
	type body struct {
		Seq  uint64   `json:"seq"`
		Data []string `json:"data"`
	}
	plain, _ := json.Marshal(body{Seq: 12345, Data: []string{"w4.3013", "x"}})
	b := Seal(plain)
	if err := Check(b, "seq"); err != nil {
		t.Fatalf("intact: %v", err)
	}
	var got body
	if err := json.Unmarshal(b, &got); err != nil || got.Seq != 12345 {
		t.Fatalf("sealed file decodes to %+v, %v", got, err)
	}
	for i := range b {
		for _, flip := range []byte{0x01, 0x10, 0x80, 0xff} {
			c := append([]byte(nil), b...)
			c[i] ^= flip
			if Check(c, "seq") == nil {
				t.Fatalf("byte %d changed (%q) passes", i, c)
			}
		}
	}
	if err := Check(b[:len(b)-3], "seq"); err == nil {
		t.Fatal("a cut-short file passes")
	}
	if err := Check(plain, "seq"); err != nil {
		t.Fatalf("an unsealed file of the old format: %v", err)
	}
	if err := Check([]byte(`{"sex":1}`), "seq"); err == nil {
		t.Fatal("an unsealed file starting with an unknown member passes")
	}
}
