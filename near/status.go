package near

// StatusView is the result of `status` (nearcore 2.x field set).
type StatusView struct {
	Version               NodeVersion         `json:"version"`
	ChainID               string              `json:"chain_id"`
	ProtocolVersion       uint32              `json:"protocol_version"`
	LatestProtocolVersion uint32              `json:"latest_protocol_version"`
	RPCAddr               *string             `json:"rpc_addr,omitempty"` // left out when the node has no RPC address, as nearcore does
	Validators            []ValidatorInfoView `json:"validators"`
	SyncInfo              StatusSyncInfo      `json:"sync_info"`
	ValidatorAccountID    *string             `json:"validator_account_id"`
	ValidatorPublicKey    *string             `json:"validator_public_key"`
	NodePublicKey         string              `json:"node_public_key"`
	NodeKey               *string             `json:"node_key"`
	UptimeSec             int64               `json:"uptime_sec"`
	GenesisHash           string              `json:"genesis_hash"`
}

// NodeVersion is the node's version, build and commit (nearcore's Version,
// in its field order).
type NodeVersion struct {
	Version      string `json:"version"`
	Build        string `json:"build"`
	Commit       string `json:"commit"`
	RustcVersion string `json:"rustc_version"`
}

// ValidatorInfoView is one validator of `status`. nearcore 2.x writes the
// account id alone (is_slashed was dropped).
type ValidatorInfoView struct {
	AccountID string `json:"account_id"`
}

// StatusSyncInfo is `status`'s sync_info: the head and, on nodes that
// garbage-collect, the earliest block still kept. Times are RFC 3339 with
// nanoseconds. ReplicaLagSeconds is Nearline's own (nearcore has no such
// member): set only by an archive served from a PostgreSQL replica, and
// left out otherwise, so that every other status keeps nearcore's shape.
type StatusSyncInfo struct {
	LatestBlockHash     string   `json:"latest_block_hash"`
	LatestBlockHeight   uint64   `json:"latest_block_height"`
	LatestStateRoot     string   `json:"latest_state_root"`
	LatestBlockTime     string   `json:"latest_block_time"`
	Syncing             bool     `json:"syncing"`
	EarliestBlockHash   *string  `json:"earliest_block_hash"`
	EarliestBlockHeight *uint64  `json:"earliest_block_height"`
	EarliestBlockTime   *string  `json:"earliest_block_time"`
	EpochID             *string  `json:"epoch_id"`
	EpochStartHeight    *uint64  `json:"epoch_start_height"`
	ReplicaLagSeconds   *float64 `json:"replica_lag_seconds,omitempty"`
}
