package protodoc

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"parley/services"
)

// Tables renders every generated region of docs/protocol.md from the
// manifest, by region name.
func Tables(m services.Manifest) (map[string]string, error) {
	dialectic, err := profile(m, "dialectic")
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"summary":           summary(m),
		"norms":             norms(m.Norms),
		"operations":        operations(m.Operations),
		"responses":         responses(m.Operations),
		"shapes":            shapes(),
		"reasons":           reasons(m.Reasons),
		"envelope":          fields(m.Envelope.Fields, m.Envelope.ServerSet),
		"acts":              acts(m.Acts),
		"states":            states(m.States),
		"transitions":       transitions(m.States.Transitions),
		"rights":            rights(m.Rights),
		"limits":            limits(m),
		"profiles":          profiles(m.Profiles),
		"dialectic-acts":    acts(dialectic.Acts),
		"dialectic-fields":  fields(dialectic.Fields, nil),
		"claim-statuses":    claimStatuses(dialectic.Statuses),
		"claim-transitions": claimTransitions(dialectic.Transitions),
		"evidence-kinds":    evidenceKinds(dialectic.EvidenceKinds),
	}, nil
}

func profile(m services.Manifest, name string) (services.ProfileInfo, error) {
	i := slices.IndexFunc(m.Profiles, func(p services.ProfileInfo) bool { return p.Name == name })
	if i < 0 {
		return services.ProfileInfo{}, fmt.Errorf("protodoc: the manifest lists no profile %q", name)
	}
	return m.Profiles[i], nil
}

func summary(m services.Manifest) string {
	names := make([]string, len(m.Profiles))
	for i, p := range m.Profiles {
		names[i] = code(p.Name)
	}
	profileActs, mcp := 0, 0
	for _, p := range m.Profiles {
		profileActs += len(p.Acts)
	}
	for _, op := range m.Operations {
		if op.MCPTool != "" {
			mcp++
		}
	}
	return fmt.Sprintf("- Protocol version: %s (the manifest's `parley`)\n"+
		"- Server: %s %s; default realm %s\n"+
		"- Profiles: %s\n"+
		"- %d core acts, %d profile acts, %d states, %d refusal reasons, %d limits, %d operations (%d of them MCP tools)\n",
		code(m.Parley), code(m.Server.Name), m.Server.Version, code(m.Realm), strings.Join(names, ", "),
		len(m.Acts), profileActs, len(m.States.Forward)+len(m.States.Side), len(m.Reasons),
		len(limitList(m.Limits)), len(m.Operations), mcp)
}

func norms(ns []string) string {
	var b strings.Builder
	for _, n := range ns {
		b.WriteString(text(n) + "\n") // each norm starts with its number
	}
	return b.String()
}

func operations(ops []services.Operation) string {
	t := newTable("operation", "MCP tool", "HTTP", "right", "what it does")
	for _, op := range ops {
		tool := "— (HTTP only)"
		if op.MCPTool != "" {
			tool = code(op.MCPTool)
		}
		t.row(code(string(op.Name)), tool, code(op.HTTP), text(string(op.Right)), text(op.Description))
	}
	return t.String()
}

func responses(ops []services.Operation) string {
	t := newTable("operation", "status", "success body")
	for _, op := range ops {
		body := "Server-Sent Events (§13)"
		if op.Response != nil {
			body = keys(reflect.TypeOf(op.Response))
		}
		t.row(code(string(op.Name)), strconv.Itoa(op.Status), body)
	}
	return t.String()
}

// shapeTypes are the wire shapes of §8.1 and §10, in the order the text
// introduces them.
var shapeTypes = []struct {
	name string
	v    any
}{
	{"Thread", services.Thread{}},
	{"Message", services.Message{}},
	{"Author (from, created_by, actor, claimant, by)", services.Author{}},
	{"Awaiting", services.Awaiting{}},
	{"Event", services.Event{}},
	{"InboxItem", services.InboxItem{}},
	{"Claim", services.Claim{}},
	{"ClaimAct (attestations, refutations, verified_by)", services.ClaimAct{}},
	{"Evidence", services.Evidence{}},
	{"Refusal (error)", services.Refusal{}},
}

func shapes() string {
	t := newTable("shape", "keys (? when left out if empty)")
	for _, s := range shapeTypes {
		t.row(s.name, keys(reflect.TypeOf(s.v)))
	}
	return t.String()
}

// keys lists the JSON keys of a struct type as a code span, in declaration
// order, an embedded struct's in its place; "?" marks a key omitted when
// empty.
func keys(t reflect.Type) string {
	var names []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			switch {
			case f.Anonymous && tag == "":
				walk(f.Type)
				continue
			case !f.IsExported() || tag == "-":
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if name == "" {
				name = f.Name
			}
			if strings.Contains(opts, "omit") {
				name += "?"
			}
			names = append(names, name)
		}
	}
	walk(t)
	return code("{" + strings.Join(names, ", ") + "}")
}

func reasons(rs []services.ReasonInfo) string {
	t := newTable("reason", "status", "when")
	for _, r := range rs {
		t.row(code(string(r.Reason)), strconv.Itoa(r.Status), text(r.Description))
	}
	return t.String()
}

// fieldOrder is the order of the envelope's fields in §3; fields the
// manifest adds later follow in alphabetical order.
var fieldOrder = []string{"parley", "kind", "thread", "parent", "from", "body", "provenance", "to", "state",
	"claim", "evidence", "supersedes", "valid_until", "reply_by"}

func fields(fs map[string]string, serverSet []string) string {
	names := make([]string, 0, len(fs))
	for name := range fs {
		names = append(names, name)
	}
	rank := func(name string) int {
		if i := slices.Index(fieldOrder, name); i >= 0 {
			return i
		}
		return len(fieldOrder)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	t := newTable("field", "rule")
	for _, name := range names {
		t.row(code(name), text(fs[name]))
	}
	for _, name := range serverSet {
		t.row(code(name), "set by the server; ignored when a client sends it")
	}
	return t.String()
}

func acts(as []services.ActInfo) string {
	t := newTable("kind", "what it does", "sets `awaiting` to", "mark it carries")
	for _, a := range as {
		t.row(code(string(a.Kind)), text(a.Description), text(a.Awaiting), text(a.Mark))
	}
	return t.String()
}

func states(s services.StatesInfo) string {
	t := newTable("state", "line", "meaning")
	for _, st := range s.Forward {
		t.row(code(string(st)), "forward", text(s.Descriptions[st]))
	}
	for _, st := range s.Side {
		t.row(code(string(st)), "side", text(s.Descriptions[st]))
	}
	return t.String()
}

func transitions(ts []services.Transition) string {
	t := newTable("act", "from", "also from, while a pending proposal", "to", "note")
	for _, tr := range ts {
		t.row(code(tr.Act), codes(tr.From), codes(tr.FromProposed), code(string(tr.To)), cmp.Or(text(tr.Note), "—"))
	}
	return t.String()
}

func rights(rs []services.RightInfo) string {
	t := newTable("right", "what it allows")
	for _, r := range rs {
		t.row(code(string(r.Right)), text(r.Description))
	}
	return t.String()
}

func limits(m services.Manifest) string {
	owner := map[string]string{}
	for _, p := range m.Profiles {
		for name := range p.Limits {
			owner[name] = code(p.Name)
		}
	}
	t := newTable("limit", "value", "profile")
	for _, l := range limitList(m.Limits) {
		t.row(code(l.name), strconv.Itoa(l.value), cmp.Or(owner[l.name], "—"))
	}
	return t.String()
}

type limit struct {
	name  string
	value int
}

// limitList lists the limits in the order services.Limits declares them,
// named as the manifest names them (their JSON keys).
func limitList(l services.Limits) []limit {
	v := reflect.ValueOf(l)
	out := make([]limit, v.NumField())
	for i := range out {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		out[i] = limit{name, int(v.Field(i).Int())}
	}
	return out
}

func profiles(ps []services.ProfileInfo) string {
	t := newTable("profile", "what it adds", "acts", "operations", "reasons", "limits")
	for _, p := range ps {
		kinds := make([]string, len(p.Acts))
		for i, a := range p.Acts {
			kinds[i] = string(a.Kind)
		}
		reasons := make([]string, len(p.Reasons))
		for i, r := range p.Reasons {
			reasons[i] = string(r)
		}
		var lims []string
		for name := range p.Limits {
			lims = append(lims, name)
		}
		slices.Sort(lims)
		t.row(code(p.Name), text(p.Description), codes(kinds), codes(p.Operations), codes(reasons), codes(lims))
	}
	return t.String()
}

func claimStatuses(ss []services.StatusInfo) string {
	t := newTable("status", "meaning")
	for _, s := range ss {
		t.row(code(string(s.Status)), text(s.Description))
	}
	return t.String()
}

func claimTransitions(ts []services.ClaimTransition) string {
	t := newTable("act", "from", "to", "note")
	for _, tr := range ts {
		from := codes(tr.From)
		if len(tr.From) == 0 {
			from = "— (a new claim)"
		}
		t.row(code(string(tr.Act)), from, code(string(tr.To)), text(tr.Note))
	}
	return t.String()
}

func evidenceKinds(ks []services.EvidenceKindInfo) string {
	t := newTable("kind", "points at")
	for _, k := range ks {
		t.row(code(string(k.Kind)), text(k.Description))
	}
	return t.String()
}

// table is a Markdown (GFM) table being written.
type table struct{ b strings.Builder }

func newTable(head ...string) *table {
	t := &table{}
	t.row(head...)
	t.row(slices.Repeat([]string{"---"}, len(head))...)
	return t
}

func (t *table) row(cells ...string) { t.b.WriteString("| " + strings.Join(cells, " | ") + " |\n") }

func (t *table) String() string { return t.b.String() }

// text makes prose safe in a table cell: a | would end the cell (even in
// a code span), and outside code spans * and < would read as emphasis and
// HTML.
func text(s string) string {
	parts := strings.Split(s, "`")
	for i := 0; i < len(parts); i += 2 {
		parts[i] = strings.NewReplacer("*", `\*`, "<", "&lt;").Replace(parts[i])
	}
	return strings.ReplaceAll(strings.Join(parts, "`"), "|", `\|`)
}

// code is s as a code span, or a dash when s is empty.
func code(s string) string {
	if s == "" {
		return "—"
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

// codes is a list of code spans, or a dash when it is empty.
func codes[S ~string](list []S) string {
	if len(list) == 0 {
		return "—"
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = code(string(s))
	}
	return strings.Join(out, ", ")
}
