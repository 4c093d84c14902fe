package realchain

import (
	"testing"

	"github.com/nearline/nearline/internal/fixture"
)

// BenchmarkCopy renders copies of the mainnet document, as the bench's
// real phase does for each block of its chain.
func BenchmarkCopy(b *testing.B) {
	doc := fixture.Read(b, "real/neardata/mainnet-151768255.json")
	tpl, err := New(doc)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	k := 0
	for b.Loop() {
		k++
		if _, err := tpl.Copy(k); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNew reads the mainnet document into a template.
func BenchmarkNew(b *testing.B) {
	doc := fixture.Read(b, "real/neardata/mainnet-151768255.json")
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(doc); err != nil {
			b.Fatal(err)
		}
	}
}
