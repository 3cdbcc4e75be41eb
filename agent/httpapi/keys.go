package httpapi

import (
	"context"
	"net/http"
	"time"
)

// postKeys runs a keyring operation on every member (the agent's
// ChangeKeys), waiting at most 5 s for their answers.
func (s *Server) postKeys(r *http.Request) (any, error) {
	var op struct {
		Op  string `json:"op"`
		Key string `json:"key,omitempty"`
	}
	if err := decodeBody(r, &op); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	res, err := s.agent.ChangeKeys(ctx, op.Op, op.Key)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "%v", err)
	}
	return res, nil
}
