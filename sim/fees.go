package sim

import "github.com/nearline/nearline/near"

// fee is one action fee in gas.
type fee struct{ sendSir, sendNotSir, exec uint64 }

func (f fee) send(sir bool) uint64 {
	if sir {
		return f.sendSir
	}
	return f.sendNotSir
}

func (f fee) view() near.Fee {
	return near.Fee{SendSir: f.sendSir, SendNotSir: f.sendNotSir, Execution: f.exec}
}

// The runtime fees of the simulated protocol (nearcore 2.x values).
var (
	feeReceipt       = fee{108_059_500_000, 108_059_500_000, 108_059_500_000}
	feeDataReceipt   = fee{36_486_732_312, 36_486_732_312, 36_486_732_312}
	feeDataPerByte   = fee{17_212_011, 17_212_011, 17_212_011}
	feeCreateAccount = fee{3_850_000_000_000, 3_850_000_000_000, 3_850_000_000_000}
	feeDeploy        = fee{184_765_750_000, 184_765_750_000, 184_765_750_000}
	feeDeployPerByte = fee{6_812_999, 6_812_999, 64_572_944}
	feeFunctionCall  = fee{2_319_861_500_000, 2_319_861_500_000, 2_319_861_500_000}
	feeFnCallPerByte = fee{2_235_934, 2_235_934, 2_235_934}
	feeTransfer      = fee{115_123_062_500, 115_123_062_500, 115_123_062_500}
	feeStake         = fee{141_715_687_500, 141_715_687_500, 102_217_625_000}
	feeAddFullKey    = fee{101_765_125_000, 101_765_125_000, 101_765_125_000}
	feeAddFnKey      = fee{102_217_625_000, 102_217_625_000, 102_217_625_000}
	feeAddFnKeyByte  = fee{1_925_331, 1_925_331, 1_925_331}
	feeDeleteKey     = fee{94_946_625_000, 94_946_625_000, 94_946_625_000}
	feeDeleteAccount = fee{147_489_000_000, 147_489_000_000, 147_489_000_000}
)

// actionFees returns the send (for the given sir) and execution gas of one
// action.
func actionFees(a near.ActionView, sir bool) (send, exec uint64) {
	add := func(f fee, n uint64) {
		send += f.send(sir) * n
		exec += f.exec * n
	}
	switch {
	case a.CreateAccount:
		add(feeCreateAccount, 1)
	case a.DeployContract != nil:
		add(feeDeploy, 1)
		add(feeDeployPerByte, uint64(len(a.DeployContract.Code)))
	case a.FunctionCall != nil:
		add(feeFunctionCall, 1)
		add(feeFnCallPerByte, uint64(len(a.FunctionCall.Args)+len(a.FunctionCall.MethodName)))
	case a.Transfer != nil:
		add(feeTransfer, 1)
	case a.Stake != nil:
		add(feeStake, 1)
	case a.AddKey != nil:
		if fc := a.AddKey.AccessKey.Permission.FunctionCall; fc != nil {
			add(feeAddFnKey, 1)
			n := 0
			for _, m := range fc.MethodNames {
				n += len(m)
			}
			add(feeAddFnKeyByte, uint64(n))
		} else {
			add(feeAddFullKey, 1)
		}
	case a.DeleteKey != nil:
		add(feeDeleteKey, 1)
	case a.DeleteAccount != nil:
		add(feeDeleteAccount, 1)
	case a.Delegate != nil:
		p := delegateCost(a.Delegate)
		send += feeDelegate.send(sir)
		exec += p.execOwn + p.nestedSend + p.nestedExec
	}
	return send, exec
}

// Storage accounting (storage_usage_config).
const (
	storageAccount     = 100
	storageExtraRecord = 40
)

// accessKeyStorage is the storage a key takes: borsh key, borsh access key
// and the per-record overhead.
func accessKeyStorage(pk string, k near.AccessKeyView) uint64 {
	n := uint64(len(near.PublicKeyBorsh(pk))) + 8 + 1 + storageExtraRecord
	if fc := k.Permission.FunctionCall; fc != nil {
		n++
		if fc.Allowance != nil {
			n += 16
		}
		n += 4 + uint64(len(fc.ReceiverID)) + 4
		for _, m := range fc.MethodNames {
			n += 4 + uint64(len(m))
		}
	}
	return n
}
