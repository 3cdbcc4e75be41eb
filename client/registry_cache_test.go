package client

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

func TestAgentDownAnswersFromCacheFile(t *testing.T) {
	testutil.CheckLeaks(t)
	a := newURLAgent(t)
	for _, u := range []string{provA1, provB, ruleA} {
		a.add(t, u)
	}
	cache := filepath.Join(t.TempDir(), "sub", "registry.cache")
	sub := "consumer://10.0.0.9/com.example.Greeter?category=providers,routers&group=a&version=1.0"

	// A first run of the process fills the cache.
	r1 := a.registry(t, RegistryOptions{CacheFile: cache})
	if err := r1.Subscribe(ctxT(t), sub, &recorder{}); err != nil {
		t.Fatal(err)
	}
	if err := r1.Close(); err != nil {
		t.Fatal(err)
	}

	// The next run starts while the agent is down.
	a.setDown(true)
	r2 := a.registry(t, RegistryOptions{CacheFile: cache})
	rec := &recorder{}
	if err := r2.Subscribe(ctxT(t), sub, rec); err != nil {
		t.Fatalf("Subscribe with the agent down and a cache: %v", err)
	}
	want := [][]string{{provA1}, {ruleA}}
	if got := rec.all(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("notified %q from the cache, want %q", got, want)
	}
	got, err := r2.Lookup(ctxT(t), sub)
	if err != nil || !slices.Equal(got, []string{provA1, ruleA}) {
		t.Fatalf("Lookup from the cache: %q, %v", got, err)
	}
	// Another group of the same interface is answered from the same lists.
	got, err = r2.Lookup(ctxT(t), "consumer://10.0.0.9/com.example.Greeter?group=b&version=1.0")
	if err != nil || !slices.Equal(got, []string{provB}) {
		t.Fatalf("Lookup of group b from the cache: %q, %v", got, err)
	}
	if _, err := r2.Lookup(ctxT(t), "consumer://10.0.0.9/com.example.Unknown"); err == nil {
		t.Fatal("Lookup of an interface neither the agent nor the cache knows succeeded")
	}

	// When the agent answers again, what changed meanwhile is notified.
	a.remove(t, provA1)
	a.add(t, provA2)
	a.setDown(false)
	rec.waitFor(t, 5*time.Second, iface, "providers", provA2)
	if got := rec.last(iface, "routers"); !slices.Equal(got, []string{ruleA}) {
		t.Fatalf("routers %q after the agent came back, want unchanged", got)
	}
	if n := rec.count(); n != 3 {
		t.Fatalf("%d notifications, want 3 (two cached, one change): %q", n, rec.all())
	}
}

func TestAgentDownWithoutCache(t *testing.T) {
	testutil.CheckLeaks(t)
	a := newURLAgent(t)
	a.add(t, provA1)
	a.setDown(true)
	r := a.registry(t, RegistryOptions{})
	sub := "consumer://10.0.0.9/com.example.Greeter?category=providers,routers&group=a&version=1.0"

	checked := &recorder{}
	if err := r.Subscribe(ctxT(t), sub, checked); err == nil {
		t.Fatal("Subscribe succeeded with the agent down and no cache")
	}
	quiet := &recorder{}
	if err := r.Subscribe(ctxT(t), sub+"&check=false", quiet); err != nil {
		t.Fatalf("Subscribe with check=false: %v", err)
	}
	if _, err := r.Lookup(ctxT(t), sub); err == nil {
		t.Fatal("Lookup succeeded with the agent down and no cache")
	}
	if checked.count()+quiet.count() != 0 {
		t.Fatal("notified with nothing known")
	}
	// Both subscriptions were kept: once the agent answers, each gets its
	// first notification, complete.
	a.setDown(false)
	for _, rec := range []*recorder{checked, quiet} {
		testutil.Eventually(t, 5*time.Second, func() error {
			if rec.count() < 2 {
				return errors.New("first notification not complete yet")
			}
			return nil
		})
		calls := rec.all()
		if !slices.Equal(calls[0], []string{provA1}) || stream(calls[1]) != iface+" routers" {
			t.Fatalf("first notification %q", calls)
		}
	}
}

func TestEveryServiceFromCacheFile(t *testing.T) {
	testutil.CheckLeaks(t)
	a := newURLAgent(t)
	other := canon("dubbo://10.0.0.7:20880/com.example.Other")
	a.add(t, provA1)
	a.add(t, other)
	cache := filepath.Join(t.TempDir(), "registry.cache")
	sub := "admin://10.0.0.9/*?group=*&version=*"
	r1 := a.registry(t, RegistryOptions{CacheFile: cache})
	if err := r1.Subscribe(ctxT(t), sub, &recorder{}); err != nil {
		t.Fatal(err)
	}
	r1.Close()

	a.setDown(true)
	r2 := a.registry(t, RegistryOptions{CacheFile: cache})
	rec := &recorder{}
	if err := r2.Subscribe(ctxT(t), sub, rec); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.all(), [][]string{{provA1}, {other}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("got %q, want %q", got, want)
	}
	got, err := r2.Lookup(ctxT(t), sub)
	if err != nil || !slices.Equal(got, []string{provA1, other}) {
		t.Fatalf("Lookup: %q, %v", got, err)
	}
}

func TestCacheFileIsReplacedWholeAndCorruptionSetAside(t *testing.T) {
	testutil.CheckLeaks(t)
	a := newURLAgent(t)
	a.add(t, provA1)
	dir := t.TempDir()
	cache := filepath.Join(dir, "registry.cache")
	if err := os.WriteFile(cache, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := a.registry(t, RegistryOptions{CacheFile: cache})
	if _, err := os.Stat(cache + ".corrupt"); err != nil {
		t.Fatalf("corrupt cache not set aside: %v", err)
	}
	if err := r.Subscribe(ctxT(t), "consumer://10.0.0.9/com.example.Greeter?group=a&version=1.0", &recorder{}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		b, err := os.ReadFile(cache)
		if err != nil {
			return err
		}
		var f cacheJSON
		if err := json.Unmarshal(b, &f); err != nil {
			return err
		}
		if !slices.Equal(f.Interfaces[iface]["providers"], []string{provA1}) {
			return errors.New("provider not cached yet")
		}
		return nil
	})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"registry.cache", "registry.cache.corrupt"}; !slices.Equal(names, want) {
		t.Fatalf("files %q, want %q (no temporary files left)", names, want)
	}
}
