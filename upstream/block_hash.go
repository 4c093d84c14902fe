package upstream

import (
	"context"
	"errors"

	"github.com/nearline/nearline/near"
)

// BlockHash returns the hash of the upstream's block at height (an
// archive's genesis block, to know its chain by).
func (c *Client) BlockHash(ctx context.Context, height uint64) (string, error) {
	var block struct {
		Header struct {
			Hash string `json:"hash"`
		} `json:"header"`
	}
	if err := c.Call(ctx, "block", map[string]uint64{"block_id": height}, &block); err != nil {
		return "", err
	}
	return block.Header.Hash, nil
}

// NoBlock reports whether err is the upstream's answer that it does not
// have a block: a NEAR error, or ErrNeedsArchival from a node that is not
// archival.
func NoBlock(err error) bool {
	var ne *near.Error
	return errors.As(err, &ne) || errors.Is(err, ErrNeedsArchival)
}
