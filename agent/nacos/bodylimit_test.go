package nacos

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A form body past the door's bound is refused as too large (413, naming
// the bound) in the shape of the API called, not read as an empty form
// ("serviceName is empty"), and registers nothing.
func TestBodyPastTheBoundIsTooLarge(t *testing.T) {
	s, _ := startServer(t)
	big := strings.Repeat("x", MaxConfigContent+32<<10)
	for _, c := range []struct{ path, shape string }{
		{"/nacos/v1/ns/instance", "request body over "},
		{"/nacos/v1/cs/configs", "caused: request body over "},
		{"/nacos/v2/ns/instance", `"code":20002`},
	} {
		form := url.Values{"serviceName": {"big"}, "ip": {"10.0.0.9"}, "port": {"80"},
			"dataId": {"d"}, "group": {"g"}, "content": {"c"}, "metadata": {`{"k":"` + big + `"}`}}
		resp, err := http.Post("http://"+s.Addr()+c.path, "application/x-www-form-urlencoded",
			strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), c.shape) {
			t.Errorf("POST %s of %d bytes: %d %s, want 413 with %q", c.path, len(form.Encode()),
				resp.StatusCode, b, c.shape)
		}
	}
	if code, body := do(t, s, "GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"big"}}); code != 200 ||
		strings.Contains(body, "10.0.0.9") {
		t.Errorf("the refused registration is listed: %d %s", code, body)
	}
}
