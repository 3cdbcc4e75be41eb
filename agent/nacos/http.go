package nacos

import (
	"net/http"
	"time"
)

// beat is one instance registered over the 1.x HTTP API, held until no
// beat came for BeatTimeout.
type beat struct {
	key      string
	deadline time.Time
}

func (s *Server) httpHandler() http.Handler {
	mux := http.NewServeMux()
	return mux
}

func (s *Server) beatLoop() {
	<-s.ctx.Done()
}
