package near

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestErrorEnvelopes pins every error constructor's JSON byte for byte:
// name, cause with its info members in nearcore's order, code, message and
// the legacy data.
func TestErrorEnvelopes(t *testing.T) {
	t.Parallel()
	at := BlockStamp{BlockHeight: 7, BlockHash: "H"}
	height := HeightID(5)
	vmError := json.RawMessage(`{"ExecutionError": "boom"}`)
	const handler = `"name":"HANDLER_ERROR","cause":{"name":`
	const server = `"code":-32000,"message":"Server error"`
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{ParseError("bad <json>"), `{"name":"REQUEST_VALIDATION_ERROR","cause":{"name":"PARSE_ERROR","info":{"error_message":"bad \u003cjson\u003e"}},"code":-32700,"message":"Parse error","data":"bad \u003cjson\u003e"}`},
		{MethodNotFound("nope"), `{"name":"REQUEST_VALIDATION_ERROR","cause":{"name":"METHOD_NOT_FOUND","info":{"method_name":"nope"}},"code":-32601,"message":"Method not found","data":"nope"}`},
		{InternalError("store down"), `{"name":"INTERNAL_ERROR","cause":{"name":"INTERNAL_ERROR","info":{"error_message":"store down"}},` + server + `,"data":"store down"}`},
		{HandlerError("X", nil, "d"), `{` + handler + `"X","info":{}},` + server + `,"data":"d"}`},
		{UnknownBlock(height), `{` + handler + `"UNKNOWN_BLOCK","info":{}},` + server + `,"data":"DB Not Found Error: BLOCK HEIGHT: 5 \n Cause: Unknown"}`},
		{NotSyncedYet(), `{` + handler + `"NOT_SYNCED_YET","info":{}},` + server + `,"data":"Node is syncing"}`},
		{UnknownChunk("C"), `{` + handler + `"UNKNOWN_CHUNK","info":{"chunk_hash":"C"}},` + server + `,"data":"Chunk Missing (unavailable on the node): ChunkHash(` + "`C`" + `) \n Cause: Unknown"}`},
		{InvalidShardID(3), `{` + handler + `"INVALID_SHARD_ID","info":{"shard_id":3}},` + server + `,"data":"Shard id 3 does not exist"}`},
		{QueryUnknownBlock(BlockReference{BlockID: &height}), `{` + handler + `"UNKNOWN_BLOCK","info":{"block_reference":{"block_id":5}}},` + server + `,"data":"DB Not Found Error: BLOCK HEIGHT: 5 \n Cause: Unknown"}`},
		{QueryUnknownBlock(BlockReference{Finality: "final"}), `{` + handler + `"UNKNOWN_BLOCK","info":{"block_reference":{"finality":"final"}}},` + server + `,"data":"Block either has never been observed on the node or has been garbage collected: {\"finality\":\"final\"}"}`},
		{GarbageCollectedBlock(at), `{` + handler + `"GARBAGE_COLLECTED_BLOCK","info":{"block_height":7,"block_hash":"H"}},` + server + `,"data":"The data for block #7 is garbage collected on this node, use an archival node to fetch historical data"}`},
		{UnknownAccount("a.near", at), `{` + handler + `"UNKNOWN_ACCOUNT","info":{"requested_account_id":"a.near","block_height":7,"block_hash":"H"}},` + server + `,"data":"account a.near does not exist while viewing"}`},
		{NoContractCode("a.near", at), `{` + handler + `"NO_CONTRACT_CODE","info":{"contract_account_id":"a.near","block_height":7,"block_hash":"H"}},` + server + `,"data":"Contract code for contract ID a.near has never been observed on the node"}`},
		{TooLargeContractState("a.near", at), `{` + handler + `"TOO_LARGE_CONTRACT_STATE","info":{"contract_account_id":"a.near","block_height":7,"block_hash":"H"}},` + server + `,"data":"State of contract a.near is too large to be viewed"}`},
		{UnknownAccessKey("ed25519:K", at), `{` + handler + `"UNKNOWN_ACCESS_KEY","info":{"public_key":"ed25519:K","block_height":7,"block_hash":"H"}},` + server + `,"data":"Access key for public key ed25519:K has never been observed on the node"}`},
		{ContractExecutionError(vmError, "E", at), `{` + handler + `"CONTRACT_EXECUTION_ERROR","info":{"vm_error":{"ExecutionError":"boom"},"block_height":7,"block_hash":"H"}},` + server + `,"data":"Function call returned an error: E"}`},
		{NoSyncedBlocks(), `{` + handler + `"NO_SYNCED_BLOCKS","info":{}},` + server + `,"data":"There are no fully synchronized blocks on the node yet"}`},
		{UnknownReceipt("R"), `{` + handler + `"UNKNOWN_RECEIPT","info":{"receipt_id":"R"}},` + server + `,"data":{"name":"UNKNOWN_RECEIPT","info":{"receipt_id":"R"}}}`},
		{UnknownTransaction("T"), `{` + handler + `"UNKNOWN_TRANSACTION","info":{"requested_transaction_hash":"T"}},` + server + `,"data":"Transaction T doesn't exist"}`},
	} {
		got, err := json.Marshal(tc.err)
		require.NoError(t, err)
		require.Equal(t, tc.want, string(got))
	}
}
