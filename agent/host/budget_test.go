package host

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

func budgetURL(i int) routes.Record {
	return routes.Record{URL: &routes.URL{Interface: "com.x.Y", Category: "providers", URL: fmt.Sprintf("dubbo://10.0.%d.%d:20880/com.x.Y", i/250, i%250)}}
}

// Writers racing at the budget: each saves its lease (Hold), then
// applies, as doors do. Exactly the budget is held; a write that Hold
// let through is never refused by its Apply (Hold reserved its room), so
// no lease is left written for a record that was not applied.
func TestBudgetHoldsUnderConcurrentWriters(t *testing.T) {
	const max = 10
	h := New(Config{Table: routes.NewTable("self", 1), Budget: routes.Budget{Records: max}})
	var wg sync.WaitGroup
	var mu sync.Mutex
	held, refused := 0, 0
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := budgetURL(i)
			l := lease.Lease{Door: "test", ID: r.Key(), Keys: []string{r.Key()}}
			if _, err := h.Hold(l, []routes.Record{r}); err != nil {
				if !errors.Is(err, routes.ErrBudget) {
					t.Error(err)
				}
				mu.Lock()
				refused++
				mu.Unlock()
				return
			}
			if _, err := h.Apply([]routes.Record{r}, nil); err != nil {
				t.Errorf("Apply refused what Hold let through: %v", err)
				return
			}
			mu.Lock()
			held++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if u := h.table.Usage("self"); held != max || refused != 40-max || u.Records != max {
		t.Fatalf("held %d, refused %d, table %+v; want %d held", held, refused, u, max)
	}
}

// At the budget a delete, and a replacement no larger, are applied; a
// write that grows the records is refused and changes nothing.
func TestBudgetNeverLocksOutAWithdrawal(t *testing.T) {
	h := New(Config{Table: routes.NewTable("self", 1), Budget: routes.Budget{Records: 2}})
	for i := range 2 {
		if _, err := h.Apply([]routes.Record{budgetURL(i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := h.Apply([]routes.Record{budgetURL(2)}, nil); ok || !errors.Is(err, routes.ErrBudget) {
		t.Fatalf("a third record: %v %v", ok, err)
	}
	// A swap in one change: one in, one out.
	if ok, err := h.Apply([]routes.Record{budgetURL(2)}, []string{budgetURL(0).Key()}); !ok || err != nil {
		t.Fatalf("a swap at the budget: %v %v", ok, err)
	}
	if ok, err := h.Apply(nil, []string{budgetURL(1).Key()}); !ok || err != nil {
		t.Fatalf("a delete at the budget: %v %v", ok, err)
	}
	if u := h.table.Usage("self"); u.Records != 1 {
		t.Fatalf("usage %+v", u)
	}
}
