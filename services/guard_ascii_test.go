package services

import (
	"math/rand/v2"
	"testing"
)

// TestNormalizeASCIIAgreesWithNormalizeBody: the ASCII shortcut of
// bodyHash folds and joins as NormalizeBody does, on chosen bodies and on
// random ones drawn from letters, digits, punctuation and every ASCII
// space and control character; a body with any other character is left
// to NormalizeBody.
func TestNormalizeASCIIAgreesWithNormalizeBody(t *testing.T) {
	bodies := []string{"", " ", "Hello", "  Hello\t\tWORLD \n", "a\vb\fc\rd", "x\x00y", "\x1c\x1d\x1e\x1f", "Ünïcode", "STRASSE", "a\u00a0b", "a\u0085b"}
	r := rand.New(rand.NewPCG(31, 7))
	for range 2000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(128))
		}
		bodies = append(bodies, string(b))
	}
	for _, body := range bodies {
		folded, ascii := normalizeASCII(body)
		want := NormalizeBody(body)
		isASCII := true
		for i := 0; i < len(body); i++ {
			isASCII = isASCII && body[i] < 0x80
		}
		if ascii != isASCII || (ascii && string(folded) != want) {
			t.Errorf("%q: normalizeASCII %q (ascii %v), NormalizeBody %q", body, folded, ascii, want)
		}
	}
}
