package near

import (
	"encoding/json"
	"errors"
	"fmt"
)

// CongestionLevelView is the result of `EXPERIMENTAL_congestion_level`.
type CongestionLevelView struct {
	CongestionLevel F64 `json:"congestion_level"`
}

// CongestionControlConfig is the part of a protocol config's
// runtime_config.congestion_control_config the congestion level reads.
type CongestionControlConfig struct {
	MaxCongestionIncomingGas       uint64 `json:"max_congestion_incoming_gas"`
	MaxCongestionOutgoingGas       uint64 `json:"max_congestion_outgoing_gas"`
	MaxCongestionMemoryConsumption uint64 `json:"max_congestion_memory_consumption"`
}

var errNoCongestionConfig = errors.New("protocol config has no runtime_config.congestion_control_config")

// CongestionConfigOf reads the congestion control config of an
// `EXPERIMENTAL_protocol_config` result.
func CongestionConfigOf(protocolConfig json.RawMessage) (CongestionControlConfig, error) {
	var view struct {
		RuntimeConfig struct {
			CongestionControlConfig *CongestionControlConfig `json:"congestion_control_config"`
		} `json:"runtime_config"`
	}
	if err := json.Unmarshal(protocolConfig, &view); err != nil {
		return CongestionControlConfig{}, fmt.Errorf("decode protocol config: %w", err)
	}
	if view.RuntimeConfig.CongestionControlConfig == nil {
		return CongestionControlConfig{}, errNoCongestionConfig
	}
	return *view.RuntimeConfig.CongestionControlConfig, nil
}

// CongestionLevel is what nearcore's EXPERIMENTAL_congestion_level answers
// for a chunk header's congestion info: the largest of its incoming
// (delayed receipts gas), outgoing (buffered receipts gas) and memory
// (receipt bytes) congestion, each a fraction of the config's maximum
// clamped to [0, 1]. Missed chunks are not counted: nearcore's RPC reports
// the chunk's own ("localized") level. A chunk without congestion info (a
// protocol before congestion control) is 0.
func CongestionLevel(info *CongestionInfo, cfg CongestionControlConfig) float64 {
	if info == nil {
		return 0
	}
	incoming := clampedFraction(info.DelayedReceiptsGas, cfg.MaxCongestionIncomingGas)
	outgoing := clampedFraction(info.BufferedReceiptsGas, cfg.MaxCongestionOutgoingGas)
	memory := clampedFraction(U128From64(info.ReceiptBytes), cfg.MaxCongestionMemoryConsumption)
	return max(incoming, outgoing, memory)
}

// clampedFraction is value/limit, or 1 once value reaches limit; each side
// is first rounded to the nearest float64, as Rust's `as f64` does.
func clampedFraction(value U128, limit uint64) float64 {
	if value.Cmp(U128From64(limit)) >= 0 {
		return 1
	}
	v, _ := value.Big().Float64()
	return v / float64(limit)
}
