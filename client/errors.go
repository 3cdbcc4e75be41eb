package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// StatusError is an answer the agent refused: 400 bad input, 404 unknown
// topic or service, 405, 413 body too large, 503 agent leaving.
type StatusError struct {
	Code    int    // HTTP status
	Message string // the agent's "error" text, or the status text without one
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("namecast: %d %s: %s", e.Code, http.StatusText(e.Code), e.Message)
}

// IsNotFound reports whether err is the agent saying that the topic,
// service or registration asked for does not exist.
func IsNotFound(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusNotFound
}

func statusError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var answer struct {
		Error string `json:"error"`
	}
	msg := ""
	if json.Unmarshal(body, &answer) == nil {
		msg = strings.TrimSpace(answer.Error)
	} else {
		// Not the agent's JSON: a proxy or another server answered; its
		// text is still the best clue.
		msg = strings.TrimSpace(string(body))
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &StatusError{Code: resp.StatusCode, Message: msg}
}
