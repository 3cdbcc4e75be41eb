package resp

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// ReadValue reads one whole RESP2 reply from r and returns its bytes as
// they came: what a test compares byte for byte, and how the door cuts
// COMMAND's table into entries.
func ReadValue(r *bufio.Reader) ([]byte, error) {
	var out []byte
	need := 1
	for need > 0 {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return out, err
		}
		out = append(out, line...)
		need--
		if len(line) < 3 || line[len(line)-2] != '\r' {
			return out, fmt.Errorf("resp: malformed line %q", line)
		}
		switch line[0] {
		case '+', '-', ':':
		case '$':
			n, err := strconv.Atoi(string(line[1 : len(line)-2]))
			if err != nil {
				return out, fmt.Errorf("resp: bad bulk length %q", line)
			}
			if n >= 0 {
				buf := make([]byte, n+2)
				if _, err := io.ReadFull(r, buf); err != nil {
					return out, err
				}
				out = append(out, buf...)
			}
		case '*':
			n, err := strconv.Atoi(string(line[1 : len(line)-2]))
			if err != nil {
				return out, fmt.Errorf("resp: bad array length %q", line)
			}
			if n > 0 {
				need += n
			}
		default:
			return out, fmt.Errorf("resp: unknown type %q", line[0])
		}
	}
	return out, nil
}
