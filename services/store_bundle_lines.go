package services

import (
	"bufio"
	"bytes"
	"encoding/base64"
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
// checks of each value (checkRow) hold the limits themselves. A blob's row
// (docs/protocol.md §15.4) carries up to blob_max_bytes in base64, 4/3 as
// many: the most a line may take is that with the same room above.
const bundleLineMaxBytes = 1 << 20

// lineMax is the longest line a bundle of this forum's limits holds.
func (f *Forum) lineMax() int {
	return bundleLineMaxBytes + base64.StdEncoding.EncodedLen(f.limits.BlobMaxBytes)
}

// errLineTooLong refuses a line longer than a bundle's lines may be.
type errLineTooLong int

func (e errLineTooLong) Error() string {
	return fmt.Sprintf("the line is longer than %d bytes, more than any row within this forum's limits takes", int(e))
}

// bundleLines reads a bundle line by line, each line at most max bytes.
type bundleLines struct {
	r    *bufio.Reader
	line []byte // reused: a line is decoded before the next is read
	max  int
}

func newBundleLines(r io.Reader, max int) *bundleLines {
	return &bundleLines{r: bufio.NewReaderSize(r, 1<<16), max: max}
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
		if len(b.line)+len(chunk) > b.max {
			return nil, errLineTooLong(b.max)
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
