package protodoc

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// endMarker closes a generated region.
const endMarker = "<!-- end generated -->"

// startMarker opens a generated region and names its table.
var startMarker = regexp.MustCompile(`^<!-- generated:([a-z0-9-]+) -->$`)

// Rewrite replaces the body of every generated region of doc with the
// table of its name, set off by a blank line on each side; everything
// outside the regions is kept byte for byte. A region naming no table, a
// table in two regions, an end marker without a start, a region left open
// and a table without a region are errors, so that no table silently drops
// out of the document.
func Rewrite(doc []byte, tables map[string]string) ([]byte, error) {
	var out strings.Builder
	seen := map[string]bool{}
	open, openedAt := "", 0
	for i, line := range strings.SplitAfter(string(doc), "\n") {
		bare := strings.TrimRight(line, "\r\n")
		m := startMarker.FindStringSubmatch(bare)
		switch {
		case open != "" && bare == endMarker:
			out.WriteString(line)
			open = ""
		case open != "":
			// The old body: dropped.
		case m != nil:
			table, ok := tables[m[1]]
			if !ok {
				return nil, fmt.Errorf("line %d: no table is named %q", i+1, m[1])
			}
			if seen[m[1]] {
				return nil, fmt.Errorf("line %d: table %q is generated twice", i+1, m[1])
			}
			seen[m[1]] = true
			out.WriteString(line + "\n" + table + "\n")
			open, openedAt = m[1], i+1
		case bare == endMarker:
			return nil, fmt.Errorf("line %d: %s without a region to end", i+1, endMarker)
		default:
			out.WriteString(line)
		}
	}
	if open != "" {
		return nil, fmt.Errorf("line %d: region %q is never ended with %s", openedAt, open, endMarker)
	}
	var missing []string
	for name := range tables {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("no region for the tables %s", strings.Join(missing, ", "))
	}
	return []byte(out.String()), nil
}
