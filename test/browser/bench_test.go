package browser

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/namecast/namecast/agent/ui"
	"github.com/namecast/namecast/test/browser/harness"
)

// BenchmarkTopicsPage10k loads /ui/topics on an agent holding 10,000
// topics, in a fresh tab with the cache off, and reports the first useful
// paint (navigation start to the first topic row on screen, as the page's
// own clock tells) and the bytes the agent sent for the UI itself (the
// page and its assets, gzip on the wire), beside their uncompressed size.
//
//	cd test/browser && go test -run '^$' -bench TopicsPage10k -benchtime 10x
func BenchmarkTopicsPage10k(b *testing.B) {
	needBrowser(b)
	c := startCluster(b, 1, nil)
	a := c.Agents[0]
	for i := 0; i < 10; i++ {
		topics := make([]string, 1000)
		for j := range topics {
			topics[j] = fmt.Sprintf("Topic-%02d-%04d", i, j)
		}
		if err := a.Put("/v1/brokers", harness.Broker("C", fmt.Sprintf("broker-%02d", i), 0, fmt.Sprintf("192.0.2.%d:10911", i+1), topics...)); err != nil {
			b.Fatal(err)
		}
	}
	var paint, data, bytes float64
	for b.Loop() {
		p, d, n := loadTopics(b, a.URL("/ui/topics"))
		paint += p
		data += d
		bytes += n
	}
	b.ReportMetric(paint/float64(b.N), "ms/first-paint")
	b.ReportMetric(data/float64(b.N), "ms/topics-json-received")
	b.ReportMetric(bytes/float64(b.N), "ui-bytes-on-wire")
	b.ReportMetric(float64(ui.Size()), "ui-bytes-uncompressed")
}

func loadTopics(b *testing.B, url string) (paintMs, dataMs, uiBytes float64) {
	var mu sync.Mutex
	urls := map[network.RequestID]string{}
	sizes := map[network.RequestID]float64{}
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithListener(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventResponseReceived:
			urls[ev.RequestID] = ev.Response.URL
		case *network.EventLoadingFinished:
			sizes[ev.RequestID] = ev.EncodedDataLength
		}
	}))
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, time.Minute)
	defer cancelT()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true})
		return err
	}), chromedp.Navigate(url))
	if err != nil {
		b.Fatal(err)
	}
	paintMs, err = chromedp.Run(ctx, chromedp.Poll[float64](`document.querySelector('#topics li') && document.getElementById('view').innerText.includes('10,000') && performance.now()`))
	if err != nil {
		b.Fatal(err)
	}
	// When the topic list had arrived: the rest of the paint is drawing.
	dataMs, err = chromedp.Run(ctx, chromedp.Evaluate[float64](`performance.getEntriesByType('resource').find((e) => /\/v1\/topics$/.test(e.name)).responseEnd`))
	if err != nil {
		b.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for id, u := range urls {
		if strings.Contains(u, "/ui/") {
			uiBytes += sizes[id]
		}
	}
	return paintMs, dataMs, uiBytes
}
