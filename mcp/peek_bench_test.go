package mcp

import (
	"testing"

	"parley/services"
)

// benchMsg is a post as an agent calls it.
var benchMsg = []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"post","arguments":{"kind":"note","thread":"th_123","body":"a remark on the matter at hand, with a few words more to make it the size of a real note 1234567"}}}`)

// BenchmarkGateRead is what the gate and the web binding read of a tool
// call before the MCP library decodes it: the screen, the admission's
// operation and whether it answers at once (35 µs a message before peek).
func BenchmarkGateRead(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		v, m := screen(benchMsg, 1<<16)
		if v != nil {
			b.Fatal(v)
		}
		meteredCall(m)
		Immediate(benchMsg)
	}
}

func BenchmarkPeek(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		peek(benchMsg)
	}
}

func BenchmarkCheckJSONValue(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		services.CheckJSONValue(benchMsg)
	}
}
