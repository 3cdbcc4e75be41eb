package bench

import (
	"log"
	"testing"
	"testing/synctest"
	"time"
)

// The first suspicion of the armed member is taken from memberlist's log
// line, at the bubble's time of the write; other members' suspicions,
// later ones and lines after first() are ignored.
func TestDetectionTakesTheFirstSuspicionOfTheVictim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &detection{}
		a := log.New(d, "", log.LstdFlags)
		b := log.New(d, "", log.LstdFlags)
		a.Printf("[INFO] memberlist: Suspect m-0002 has failed, no acks received")
		d.arm("m-0002")
		t0 := time.Now()
		time.Sleep(300 * time.Millisecond)
		a.Printf("[INFO] memberlist: Suspect m-00021 has failed, no acks received")
		a.Printf("[DEBUG] memberlist: Failed UDP ping: m-0002 (timeout reached)")
		time.Sleep(400 * time.Millisecond)
		b.Printf("[INFO] memberlist: Suspect m-0002 has failed, no acks received")
		time.Sleep(time.Second)
		a.Printf("[INFO] memberlist: Suspect m-0002 has failed, no acks received")
		if got := d.first().Sub(t0); got != 700*time.Millisecond {
			t.Fatalf("first suspicion %v after arming, want 700ms", got)
		}
		a.Printf("[INFO] memberlist: Suspect m-0002 has failed, no acks received")
		d.arm("m-0003")
		if at := d.first(); !at.IsZero() {
			t.Fatalf("m-0003 never suspected, got %v", at)
		}
	})
}
