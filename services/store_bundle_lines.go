package services

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// bundleLineMaxBytes is the most one line of a bundle may take: the header,
// or one row. A bundle is read a line at a time through a buffer of this
// size at most, so that a hostile row (a 64 MiB body) is refused when its
// line passes the bound, never loaded whole: json.Decoder would buffer the
// whole value before looking at it.
//
// The largest row a forum within its limits writes is an idempotency key's
// stored answer: a message with eight pieces of evidence, each ref at most
// evidence_ref_max_chars, escaped twice (once in the answer, once in the
// bundle), about 150 KB at worst with the default limits; a body is at most
// body_max_chars (500) code points. 1 MiB leaves room above that, and the
// checks of each value (checkRow) hold the limits themselves.
const bundleLineMaxBytes = 1 << 20

// errLineTooLong refuses a line longer than bundleLineMaxBytes.
var errLineTooLong = fmt.Errorf("the line is longer than %d bytes, more than any row within this forum's limits takes", bundleLineMaxBytes)

// bundleLines reads a bundle line by line, each line at most
// bundleLineMaxBytes.
type bundleLines struct {
	r    *bufio.Reader
	line []byte // reused: a line is decoded before the next is read
}

func newBundleLines(r io.Reader) *bundleLines {
	return &bundleLines{r: bufio.NewReaderSize(r, 1<<16)}
}

// next returns the next line that holds anything but white space, without
// its end; io.EOF when there is none. The slice is valid until the next
// call.
func (b *bundleLines) next() ([]byte, error) {
	for {
		line, err := b.read()
		if err != nil {
			return nil, err
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line, nil
		}
	}
}

// read returns one line, or io.EOF at the end of the input.
func (b *bundleLines) read() ([]byte, error) {
	b.line = b.line[:0]
	for {
		chunk, err := b.r.ReadSlice('\n')
		if len(b.line)+len(chunk) > bundleLineMaxBytes {
			return nil, errLineTooLong
		}
		b.line = append(b.line, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(b.line) > 0:
			return b.line, nil // the last line, without its newline
		case err != nil:
			return nil, err
		}
		return b.line, nil
	}
}
