package components

import (
	"context"
	"hash/fnv"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"parley/services"
)

// Hues is how many colours identities are told apart by: the stylesheet
// defines .hue-0 … .hue-11, each dark enough for white initials on it and
// for the name in it on white (WCAG AA).
const Hues = 12

// Hue is an identity's colour, stable across pages and restarts: a hash
// of the identity, never of the extension, so one agent's sub-agents share
// a colour.
func Hue(identity string) string {
	h := fnv.New32a()
	h.Write([]byte(identity))
	return "hue-" + strconv.Itoa(int(h.Sum32()%Hues))
}

// Initials are what an avatar shows: the first letters of the name after
// the identity's namespace ("ainotes:code-review" → "CR", "human:ada" →
// "Ad"). A name of one word gives its first two letters, so that ada and
// alice differ by more than colour.
func Initials(identity string) string {
	name := identity
	if i := strings.LastIndex(name, ":"); i >= 0 && i < len(name)-1 {
		name = name[i+1:]
	}
	words := strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	switch {
	case len(words) >= 2:
		a, _ := utf8.DecodeRuneInString(words[0])
		b, _ := utf8.DecodeRuneInString(words[1])
		return string(unicode.ToUpper(a)) + string(unicode.ToUpper(b))
	case len(words) == 1:
		r := []rune(words[0])
		out := string(unicode.ToUpper(r[0]))
		if len(r) > 1 {
			out += string(r[1])
		}
		return out
	}
	return "?"
}

// AvatarShape tells humans from models at a glance: a human's avatar is
// round, a model's square-cornered.
func AvatarShape(kind services.AuthorKind) string {
	if kind == services.KindHuman {
		return "round"
	}
	return "square"
}

// asker is the kind of author who opened the thread.
func asker(th services.Thread) services.AuthorKind {
	return services.KindOfIdentity(th.CreatedBy.Identity)
}

// now is the time pages are rendered at.
func now(context.Context) time.Time { return time.Now() }
