package client

// NotifyListener receives a subscription's notifications (Dubbo's
// NotifyListener). Each call carries the complete, never empty, list of one
// category of one interface: the registered URLs that match the
// subscription, or exactly one empty:// URL carrying the category when
// none do. Calls for one listener never overlap and arrive in order; the
// slice is the listener's to keep.
//
// A listener identifies its subscription together with the URL, so it must
// be comparable: a pointer, or a struct of comparable fields.
type NotifyListener interface {
	Notify(urls []string)
}

// NotifyFunc adapts a function to a NotifyListener. Each call returns a new
// listener; keep it to Unsubscribe later (functions cannot be compared, so
// NotifyFunc is not a func type as http.HandlerFunc is).
func NotifyFunc(f func(urls []string)) NotifyListener { return &funcListener{f} }

type funcListener struct{ f func([]string) }

func (l *funcListener) Notify(urls []string) { l.f(urls) }
