package client

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

const iface = "com.example.Greeter"

var (
	provA1    = canon("dubbo://10.0.0.1:20880/com.example.Greeter?group=a&version=1.0")
	provA2    = canon("dubbo://10.0.0.2:20880/com.example.Greeter?group=a&version=1.0")
	provB     = canon("dubbo://10.0.0.3:20880/com.example.Greeter?group=b&version=1.0")
	provOff   = canon("dubbo://10.0.0.4:20880/com.example.Greeter?enabled=false&group=a&version=1.0")
	ruleA     = canon("route://0.0.0.0/com.example.Greeter?category=routers&dynamic=false&group=a&rule=x&version=1.0")
	ruleAny   = canon("route://0.0.0.0/com.example.Greeter?category=routers&dynamic=false&rule=y")
	overrideA = canon("override://0.0.0.0/com.example.Greeter?category=configurators&dynamic=false&group=a&version=1.0&weight=5")
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSubscribeSplitsAndFiltersByCategory(t *testing.T) {
	testutil.CheckLeaks(t)
	a := newURLAgent(t)
	for _, u := range []string{provA1, provB, provOff, ruleA, ruleAny, overrideA} {
		a.add(t, u)
	}
	r := a.registry(t, RegistryOptions{})
	sub := "consumer://10.0.0.9/com.example.Greeter?category=providers,routers&group=a&side=consumer&version=1.0"
	rec := &recorder{}
	if err := r.Subscribe(ctxT(t), sub, rec); err != nil {
		t.Fatal(err)
	}
	// The first notification is complete before Subscribe returns: one
	// call per category asked for, in the order asked, each filtered by
	// group, version and enabled; configurators were not asked for.
	want := [][]string{{provA1}, {ruleA}}
	if got := rec.all(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("first notification %q, want %q", got, want)
	}

	a.add(t, provA2)
	rec.waitFor(t, 5*time.Second, iface, "providers", provA1, provA2)
	a.add(t, canon("dubbo://10.0.0.5:20880/com.example.Greeter?group=c&version=1.0")) // another group: no call
	a.remove(t, provA1)
	a.remove(t, provA2)
	rec.waitFor(t, 5*time.Second, iface, "providers", empty(sub, "providers"))
	a.remove(t, ruleA)
	rec.waitFor(t, 5*time.Second, iface, "routers", empty(sub, "routers"))

	calls := rec.all()
	checkContract(t, calls)
	for i := 1; i < len(calls); i++ {
		if slices.Equal(calls[i], calls[i-1]) {
			t.Errorf("notification %d repeats the one before: %q", i, calls[i])
		}
	}
	if n := rec.overlaps.Load(); n != 0 {
		t.Errorf("%d overlapping calls", n)
	}
}

func TestSubscribeEmptyCategoriesAndDefaults(t *testing.T) {
	testutil.CheckLeaks(t)
	a := newURLAgent(t)
	r := a.registry(t, RegistryOptions{})

	// No category: providers only. Nothing registered: one empty:// each.
	plain := "consumer://10.0.0.9/com.example.Greeter?side=consumer"
	rec := &recorder{}
	if err := r.Subscribe(ctxT(t), plain, rec); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.all(), [][]string{{empty(plain, "providers")}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("got %q, want %q", got, want)
	}

	// "*" is all four categories, minus exclusions.
	all := "consumer://10.0.0.9/com.example.Greeter?category=*,-consumers&side=consumer"
	rec2 := &recorder{}
	if err := r.Subscribe(ctxT(t), all, rec2); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{empty(all, "providers")}, {empty(all, "routers")}, {empty(all, "configurators")}}
	if got := rec2.all(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("got %q, want %q", got, want)
	}

	// The same URL and listener again is one subscription; another
	// listener is another.
	if err := r.Subscribe(ctxT(t), plain, rec); err != nil || rec.count() != 1 {
		t.Fatalf("second Subscribe: err %v, %d calls", err, rec.count())
	}
	a.add(t, canon("dubbo://10.0.0.1:20880/com.example.Greeter"))
	rec.waitFor(t, 5*time.Second, iface, "providers", canon("dubbo://10.0.0.1:20880/com.example.Greeter"))
	rec2.waitFor(t, 5*time.Second, iface, "providers", canon("dubbo://10.0.0.1:20880/com.example.Greeter"))
	if n := rec.count(); n != 2 {
		t.Fatalf("listener called %d times, want 2: %q", n, rec.all())
	}
}

func TestSubscribeEveryService(t *testing.T) {
	testutil.CheckLeaks(t)
	a := newURLAgent(t)
	r := a.registry(t, RegistryOptions{})
	sub := "admin://10.0.0.9/*?category=providers,routers&group=*&version=*"

	rec := &recorder{}
	if err := r.Subscribe(ctxT(t), sub, rec); err != nil {
		t.Fatal(err)
	}
	// No service at all: still one notification per category.
	if got, want := rec.all(), [][]string{{empty(sub, "providers")}, {empty(sub, "routers")}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("got %q, want %q", got, want)
	}

	a.add(t, provA1)
	other := canon("dubbo://10.0.0.7:20880/com.example.Other")
	a.add(t, other)
	rec.waitFor(t, 5*time.Second, iface, "providers", provA1)
	rec.waitFor(t, 5*time.Second, "com.example.Other", "providers", other)
	rec.waitFor(t, 5*time.Second, "com.example.Other", "routers",
		empty(sub+"&interface=com.example.Other", "routers"))

	// A second "*" subscriber gets everything up front, per interface
	// then category.
	rec2 := &recorder{}
	if err := r.Subscribe(ctxT(t), sub, rec2); err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{provA1}, {empty(sub+"&interface="+iface, "routers")},
		{other}, {empty(sub+"&interface=com.example.Other", "routers")},
	}
	if got := rec2.all(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("second subscriber's first notification %q, want %q", got, want)
	}

	// A service that disappears ends with empty:// for what it had.
	a.remove(t, other)
	rec.waitFor(t, 5*time.Second, "com.example.Other", "providers",
		empty(sub+"&interface=com.example.Other", "providers"))
	checkContract(t, rec.all())
}

func TestNotificationsAreSerialisedAndCoalesced(t *testing.T) {
	testutil.CheckLeaks(t)
	a := newURLAgent(t)
	r := a.registry(t, RegistryOptions{})
	release := make(chan struct{})
	rec := &recorder{}
	rec.hook = func(urls []string) {
		if len(urls) > 0 && !strings.HasPrefix(urls[0], "empty://") {
			<-release // hold the listener while the list keeps changing
		}
	}
	sub := "consumer://10.0.0.9/com.example.Greeter?group=a&version=1.0"
	if err := r.Subscribe(ctxT(t), sub, rec); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 1; i <= 20; i++ {
		u := canon("dubbo://10.0.0." + string(rune('0'+i%10)) + ":" + string(rune('0'+i/10)) + "0880/com.example.Greeter?group=a&version=1.0")
		a.add(t, u)
		want = append(want, u)
	}
	slices.Sort(want)
	close(release)
	rec.waitFor(t, 5*time.Second, iface, "providers", want...)
	if n := rec.overlaps.Load(); n != 0 {
		t.Errorf("%d overlapping calls", n)
	}
	// One call is under way while the 20 changes land; the rest coalesce.
	if n := rec.count(); n > 4 {
		t.Errorf("%d calls for a burst of 20 changes; want them coalesced", n)
	}
}

func TestUnsubscribeStopsNotifications(t *testing.T) {
	testutil.CheckLeaks(t)
	a := newURLAgent(t)
	r := a.registry(t, RegistryOptions{})
	sub := "consumer://10.0.0.9/com.example.Greeter?group=a&version=1.0"
	l := NotifyFunc(func([]string) {})
	rec := &recorder{}
	for _, ln := range []NotifyListener{l, rec} {
		if err := r.Subscribe(ctxT(t), sub, ln); err != nil {
			t.Fatal(err)
		}
	}
	r.Unsubscribe(sub, rec)
	r.Unsubscribe(sub, l)
	r.Unsubscribe(sub, rec) // not subscribed: ignored
	a.add(t, provA1)
	// The other listener's watch is gone too; a new subscriber sees the
	// list, the old one never does.
	rec2 := &recorder{}
	if err := r.Subscribe(ctxT(t), sub, rec2); err != nil {
		t.Fatal(err)
	}
	if got := rec2.all(); len(got) != 1 || !slices.Equal(got[0], []string{provA1}) {
		t.Fatalf("new subscriber got %q", got)
	}
	if n := rec.count(); n != 1 {
		t.Fatalf("unsubscribed listener called %d times, want only the first", n)
	}
}

func TestSubscribeRefusesBadInput(t *testing.T) {
	testutil.CheckLeaks(t)
	a := newURLAgent(t)
	r := a.registry(t, RegistryOptions{})
	ctx := ctxT(t)
	for _, tc := range []struct {
		url string
		l   NotifyListener
	}{
		{"consumer://10.0.0.9/com.example.Greeter", nil},
		{"consumer://10.0.0.9/com.example.Greeter", notComparableListener{}},
		{"not a url", &recorder{}},
		{"consumer://10.0.0.9/", &recorder{}},
		{"consumer://10.0.0.9/a/b", &recorder{}},
	} {
		if err := r.Subscribe(ctx, tc.url, tc.l); err == nil {
			t.Errorf("Subscribe(%q, %T) succeeded", tc.url, tc.l)
		}
	}
	if _, err := r.Lookup(ctx, "consumer://10.0.0.9/"); err == nil {
		t.Error("Lookup without an interface succeeded")
	}
}

type notComparableListener struct{ urls []string }

func (notComparableListener) Notify([]string) {}

func TestRegisterRetriesFollowingCheck(t *testing.T) {
	testutil.CheckLeaks(t)
	a := newURLAgent(t)
	r := a.registry(t, RegistryOptions{})
	ctx := ctxT(t)

	// check defaults to true: the error is returned and retried anyway.
	a.failNextWrites(2)
	if err := r.Register(ctx, provA1); err == nil {
		t.Fatal("Register succeeded while the agent refused writes")
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		if !a.has(provA1) {
			return errors.New("not registered yet")
		}
		return nil
	})

	// check=false: no error, retried the same way.
	quiet := canon("dubbo://10.0.0.2:20880/com.example.Greeter?check=false")
	a.failNextWrites(1)
	if err := r.Register(ctx, quiet); err != nil {
		t.Fatalf("Register with check=false: %v", err)
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		if !a.has(quiet) {
			return errors.New("not registered yet")
		}
		return nil
	})

	// A URL the agent refuses (4xx) is an error and is not retried.
	bad := "dubbo://10.0.0.3:20880/a/b?check=false"
	if err := r.Register(ctx, bad); err == nil {
		t.Fatal("Register of a refused URL succeeded")
	}
	if err := r.Register(ctx, "::nonsense"); err == nil {
		t.Fatal("Register of an unparsable URL succeeded")
	}
	before := len(a.writeLog())
	r.retryPending()
	r.retryPending()
	if n := len(a.writeLog()) - before; n != 0 {
		t.Fatalf("%d writes after a refusal, want none: %q", n, a.writeLog()[before:])
	}
}

func TestUnregisterFollowsDubbo(t *testing.T) {
	testutil.CheckLeaks(t)
	a := newURLAgent(t)
	r := a.registry(t, RegistryOptions{})
	ctx := ctxT(t)

	if err := r.Unregister(ctx, provA1); err != nil {
		t.Errorf("unregistering a dynamic URL nobody registered: %v", err)
	}
	if err := r.Unregister(ctx, ruleA); err == nil || !IsNotFound(err) {
		t.Errorf("unregistering a missing persistent rule: %v, want a not-found error", err)
	}

	// A register that keeps failing, then an unregister: the agent must end
	// without the URL, whatever order the retries run in.
	a.failNextWrites(1000)
	_ = r.Register(ctx, provA1)
	_ = r.Unregister(ctx, provA1)
	a.failNextWrites(0)
	testutil.Eventually(t, 5*time.Second, func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.regs) != 0 {
			return errors.New("a write is still pending")
		}
		return nil
	})
	if a.has(provA1) {
		t.Fatal("URL registered after Register then Unregister")
	}
}

func TestCloseUnregistersOnlyDynamicURLs(t *testing.T) {
	testutil.CheckLeaks(t)
	a := newURLAgent(t)
	r := a.registry(t, RegistryOptions{})
	ctx := ctxT(t)
	for _, u := range []string{provA1, ruleA} {
		if err := r.Register(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if a.has(provA1) || !a.has(ruleA) {
		t.Fatalf("after Close: provider registered %v (want false), rule %v (want true)", a.has(provA1), a.has(ruleA))
	}
	if err := r.Register(ctx, provA1); !errors.Is(err, ErrRegistryClosed) {
		t.Fatalf("Register after Close: %v", err)
	}
	if err := r.Subscribe(ctx, provA1, &recorder{}); !errors.Is(err, ErrRegistryClosed) {
		t.Fatalf("Subscribe after Close: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestTTLRegistrationsAreRenewed(t *testing.T) {
	testutil.CheckLeaks(t)
	a := newURLAgent(t)
	r := a.registry(t, RegistryOptions{TTL: time.Second})
	ctx := ctxT(t)
	if err := r.Register(ctx, provA1); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(ctx, ruleA); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		n := 0
		for _, w := range a.writeLog() {
			if w == "PUT "+provA1+" 1s" {
				n++
			}
			if strings.HasPrefix(w, "PUT "+ruleA) && w != "PUT "+ruleA+" " {
				t.Fatalf("persistent rule written with a TTL: %q", w)
			}
		}
		if n < 3 {
			return errors.New("renewed fewer than twice")
		}
		return nil
	})
	if _, err := NewRegistry(r.c, RegistryOptions{TTL: time.Millisecond}); err == nil {
		t.Fatal("NewRegistry accepted a 1ms TTL")
	}
}

func TestReplayAfterAgentRestart(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode restartMode
	}{
		{"connections break", connsBreak},
		{"swift restart, index starts over", swift},
		{"only the incarnation changes", incarnationOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testutil.CheckLeaks(t)
			a := newURLAgent(t)
			r := a.registry(t, RegistryOptions{})
			ctx := ctxT(t)
			for _, u := range []string{provA1, ruleA} {
				if err := r.Register(ctx, u); err != nil {
					t.Fatal(err)
				}
			}
			rec := &recorder{}
			sub := "consumer://10.0.0.9/com.example.Greeter?group=a&version=1.0"
			if err := r.Subscribe(ctx, sub, rec); err != nil {
				t.Fatal(err)
			}
			before := len(a.writeLog())
			a.restart(tc.mode)
			testutil.Eventually(t, 5*time.Second, func() error {
				if !a.has(provA1) {
					return errors.New("provider not registered again")
				}
				return nil
			})
			// The watch follows the new agent too.
			a.add(t, provA2)
			rec.waitFor(t, 5*time.Second, iface, "providers", provA1, provA2)
			// Only the dynamic URL was written again, not the rule: the
			// cluster kept it, and rewriting it could undo a delete.
			for _, w := range a.writeLog()[before:] {
				if strings.Contains(w, ruleA) {
					t.Errorf("rule written again after the restart: %q", w)
				}
			}
		})
	}
}
