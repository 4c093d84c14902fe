package nearvm

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// Yield/resume (NEP-519).
//
// promise_yield_create makes a PromiseYield receipt: a function call on the
// contract itself that waits for one input, whose data id the host writes
// into a register. The receipt does not travel: the runtime keeps it until
// promise_yield_resume (in a later receipt of the same account) sends the
// data, or until the yield times out and it runs with a failed result.

// Host function gas of yield/resume (nearcore's ext costs).
const (
	costYieldCreateBase = 153_411_779_276
	costYieldCreateByte = 15_643_988
	costYieldResumeBase = 1_195_627_285_210
	costYieldResumeByte = 47_683_715
)

// maxYieldPayload is nearcore's max_yield_payload_size.
const maxYieldPayload = 1024

// dataIDLen is the length of a data id (a CryptoHash).
const dataIDLen = 32

// YieldState tells promise_yield_resume whether a yield is waiting: the
// contract's account has a PromiseYield receipt for dataID that was neither
// resumed nor timed out yet.
type YieldState interface {
	YieldPending(dataID []byte) bool
}

// Resume is a promise_yield_resume that found its yield: the runtime sends
// Payload to the receipt waiting for DataID (a PromiseResume data receipt).
type Resume struct {
	DataID  []byte
	Payload []byte
}

// YieldDataID is the data id of the n-th yield (from 0) a call with
// actionHash creates: sha256(actionHash || n as 8 little-endian bytes).
func YieldDataID(actionHash []byte, n int) []byte {
	h := sha256.New()
	h.Write(actionHash)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
	return h.Sum(nil)
}

func yieldDefs() []hostDef {
	return []hostDef{
		{"promise_yield_create", 7, 1, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_yield_create")
			nameLen, namePtr, argsLen, argsPtr, gas, weight, register := st[0], st[1], st[2], st[3], st[4], st[5], st[6]
			name := s.memOrRegister(namePtr, nameLen)
			args := s.memOrRegister(argsPtr, argsLen)
			s.chargeBytes(costYieldCreateBase, costYieldCreateByte, uint64(len(name))+uint64(len(args)))
			dataID := YieldDataID(s.c.ActionHash, s.yields)
			s.yields++
			idx := s.newReceipt(s.c.CurrentAccountID, nil)
			r := &s.receipts[len(s.receipts)-1]
			r.YieldDataID = dataID
			r.Actions = append(r.Actions, Action{Kind: ActionFunctionCall, MethodName: string(name), Args: args, Gas: gas, GasWeight: weight})
			s.setRegister(register, dataID)
			st[0] = idx
		}},
		{"promise_yield_resume", 4, 1, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_yield_resume")
			idLen, idPtr, payloadLen, payloadPtr := st[0], st[1], st[2], st[3]
			dataID := s.memOrRegister(idPtr, idLen)
			payload := s.memOrRegister(payloadPtr, payloadLen)
			s.chargeBytes(costYieldResumeBase, costYieldResumeByte, uint64(len(payload)))
			if n := uint64(len(payload)); n > maxYieldPayload {
				s.fail(hostError("YieldPayloadLength",
					fmt.Sprintf("Yield resume payload is %d bytes which exceeds the %d byte limit", n, uint64(maxYieldPayload)),
					"length", n, "limit", uint64(maxYieldPayload)))
			}
			if len(dataID) != dataIDLen {
				s.fail(hostError("DataIdMalformed", "yield resumption token is malformed"))
			}
			if s.c.Yields == nil || !s.c.Yields.YieldPending(dataID) {
				st[0] = 0
				return
			}
			s.resumes = append(s.resumes, Resume{DataID: dataID, Payload: payload})
			st[0] = 1
		}},
	}
}
