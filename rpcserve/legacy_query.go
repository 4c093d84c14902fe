package rpcserve

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nearline/nearline/near"
)

// legacyQueryResult is what nearcore's `query` answers, as a result, for a
// missing access key (keys in serde_json's alphabetical order).
type legacyQueryResult struct {
	BlockHash   string   `json:"block_hash"`
	BlockHeight uint64   `json:"block_height"`
	Error       string   `json:"error"`
	Logs        []string `json:"logs"`
}

// legacyQuery turns UNKNOWN_ACCESS_KEY, which nearcore's `query` reports as
// a result, into that result; ok is false for any other error. Contract
// failures are not turned: they stay nearcore 2.x's structured
// CONTRACT_EXECUTION_ERROR.
func legacyQuery(err error) (legacyQueryResult, bool) {
	var ne *near.Error
	if !errors.As(err, &ne) || ne.CauseName() != "UNKNOWN_ACCESS_KEY" {
		return legacyQueryResult{}, false
	}
	var info struct {
		PublicKey   string `json:"public_key"`
		BlockHeight uint64 `json:"block_height"`
		BlockHash   string `json:"block_hash"`
	}
	if json.Unmarshal(ne.Cause.Info, &info) != nil {
		return legacyQueryResult{}, false
	}
	return legacyQueryResult{BlockHash: info.BlockHash, BlockHeight: info.BlockHeight,
		Error: fmt.Sprintf("access key %s does not exist while viewing", info.PublicKey), Logs: []string{}}, true
}
