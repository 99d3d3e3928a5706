package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// MaxMessageBytes is the most a transport reads of one message. Past
// request_max_bytes a message is answered with a refusal the agent can act
// on (strict.go); past this it is not read at all, and the answer is a
// JSON-RPC error without an id.
const MaxMessageBytes = 1 << 20

// screenStdio passes the lines of in that pass the screen on to the
// transport, and answers the others on out itself. out is shared with the
// transport, so writes to it are serialized, one whole message each.
func screenStdio(ctx context.Context, in io.Reader, out io.Writer, limit int, log *slog.Logger) (io.Reader, io.Writer) {
	pr, pw := io.Pipe()
	locked := &lockedWriter{w: out}
	go func() {
		rd := bufio.NewReaderSize(in, 64*1024)
		for ctx.Err() == nil {
			line, whole, err := readLine(rd, MaxMessageBytes)
			if len(bytes.TrimSpace(line)) > 0 || !whole {
				if v := screenLine(line, whole, limit); v != nil {
					locked.Write(append(v.body, '\n'))
				} else if _, err := pw.Write(append(line, '\n')); err != nil {
					return
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					log.Warn("mcp stdio: reading input", "err", err)
					pw.CloseWithError(err)
					return
				}
				pw.Close()
				return
			}
		}
		pw.Close()
	}()
	return pr, locked
}

func screenLine(line []byte, whole bool, limit int) *verdict {
	if !whole {
		return rpcError(nil, mcpgo.INVALID_REQUEST, http.StatusRequestEntityTooLarge,
			fmt.Sprintf("a message may be at most %d bytes; this one was not read", MaxMessageBytes), nil)
	}
	v, _ := screen(line, limit)
	return v
}

// readLine reads one line without its end. A line longer than max is
// skipped to its end, and whole is false.
func readLine(rd *bufio.Reader, max int) (line []byte, whole bool, err error) {
	whole = true
	for {
		part, err := rd.ReadSlice('\n')
		if whole && len(line)+len(part) <= max+1 {
			line = append(line, part...)
		} else {
			whole, line = false, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), whole, err
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write writes one whole message (the library writes each in one call),
// tidied (tidy.go).
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(tidy(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
