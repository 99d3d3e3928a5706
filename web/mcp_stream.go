package web

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
)

// netHTTP serves a net/http handler (the MCP endpoint) from Fiber. Fiber's
// own adaptor holds the whole answer back until the handler returns, but a
// waiting MCP tool call streams notifications/progress that must reach the
// client while it waits (docs/protocol.md §13, errata 2). So the handler runs on a
// goroutine of its own: if it returns without flushing, its answer is sent
// whole, as the adaptor would; from its first Flush on, the answer is a
// stream, each write sent as it comes.
func netHTTP(h http.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		fctx := c.Context()
		// The request is copied out of fasthttp's buffers: a streaming
		// handler may outlive the Fiber handler.
		ctx, cancel := context.WithCancel(context.Background())
		r, err := http.NewRequestWithContext(ctx, string(fctx.Method()), string(fctx.RequestURI()), bytes.NewReader(bytes.Clone(fctx.PostBody())))
		if err != nil {
			cancel()
			return err
		}
		r.Host, r.RemoteAddr, r.RequestURI = string(fctx.Host()), fctx.RemoteAddr().String(), string(fctx.RequestURI())
		fctx.Request.Header.VisitAll(func(k, v []byte) { r.Header.Add(string(k), string(v)) })

		w := newFlushWriter()
		go func() {
			defer close(w.finished)
			defer w.pw.Close()
			h.ServeHTTP(w, r)
		}()
		// A waiting tool call whose client went away stops at once and
		// frees its slot (watchClient); the connection is peeked, never
		// read, so that it serves the client's next request.
		gone, stopWatch := watchClient(fctx.Conn(), true)
		go func() {
			select {
			case <-gone:
				cancel()
			case <-w.finished:
			}
		}()
		select {
		case <-w.started:
		case <-w.finished:
		}
		fctx.SetStatusCode(w.status)
		for k, vv := range w.header {
			for _, v := range vv {
				fctx.Response.Header.Add(k, v)
			}
		}
		if !w.streaming {
			<-w.finished
			stopWatch()
			cancel()
			fctx.SetBody(w.buf.Bytes())
			return nil
		}
		// As serveSSE: the connection and the shutdown signal are taken
		// now, the writer runs after this handler returns.
		conn, shutdown := fctx.Conn(), fctx.Done()
		go func() {
			select {
			case <-shutdown:
				cancel()
			case <-w.finished:
			}
		}()
		fctx.SetBodyStreamWriter(func(bw *bufio.Writer) {
			// However the stream ends, the handler stops (its context ends,
			// its writes fail) before the connection is given back.
			defer func() { cancel(); w.pr.Close(); <-w.finished; stopWatch() }()
			chunk := make([]byte, 32<<10)
			for {
				n, err := w.pr.Read(chunk)
				if n > 0 {
					conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
					bw.Write(chunk[:n])
					if bw.Flush() != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		})
		return nil
	}
}

// flushWriter is the http.ResponseWriter of netHTTP: it buffers until the
// first Flush, then hands every write to the stream through a pipe.
type flushWriter struct {
	header    http.Header
	status    int
	wrote     bool
	buf       bytes.Buffer
	streaming bool
	pr        *io.PipeReader
	pw        *io.PipeWriter
	started   chan struct{} // closed at the first Flush
	finished  chan struct{} // closed when the handler returned
}

func newFlushWriter() *flushWriter {
	pr, pw := io.Pipe()
	return &flushWriter{header: http.Header{}, status: http.StatusOK, pr: pr, pw: pw,
		started: make(chan struct{}), finished: make(chan struct{})}
}

func (w *flushWriter) Header() http.Header { return w.header }

func (w *flushWriter) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
}

func (w *flushWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.streaming {
		return w.pw.Write(p)
	}
	return w.buf.Write(p)
}

// Flush starts the stream with what was buffered; afterwards each write is
// sent as it is made, so Flush has nothing more to do.
func (w *flushWriter) Flush() {
	if w.streaming {
		return
	}
	w.WriteHeader(http.StatusOK)
	w.streaming = true
	close(w.started)
	if w.buf.Len() > 0 {
		w.pw.Write(w.buf.Bytes())
	}
}
