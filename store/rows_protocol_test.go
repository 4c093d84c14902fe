package store

import (
	"encoding/json"
	"testing"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/packed"
	"github.com/nearline/nearline/near"
)

// TestProtocolConfigFirstHeightIsTheEpochsLowestBlock: the indexer fetches
// blocks concurrently, so any block of an epoch may carry its protocol
// config; the recorded first height must not depend on which one did.
func TestProtocolConfigFirstHeightIsTheEpochsLowestBlock(t *testing.T) {
	codec, err := packed.NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	r := newRowSet(codec)
	for h := uint64(10); h <= 13; h++ {
		b := &bundle.Bundle{}
		b.Block.Header = near.BlockHeaderView{Height: h, EpochID: "E", Hash: "h"}
		b.BlockJSON = json.RawMessage(`{}`)
		if h == 12 {
			b.ProtocolConfig = &bundle.ProtocolConfig{EpochID: "E", ProtocolVersion: 73, JSON: json.RawMessage(`{}`)}
		}
		if err := r.addBundle(b); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.protocols) != 1 || r.protocols[0].first != 10 {
		t.Fatalf("protocol rows %v: want one row with first height 10", r.protocols)
	}
}
