package nearvm

import (
	"context"
	"encoding/binary"
	"strings"

	"github.com/nearline/nearline/near"
)

// promise is a promise index's target: one receipt, or a joint promise
// (promise_and) over several receipts.
type promise struct {
	receipt int   // index into callState.receipts; -1 for a joint promise
	joint   []int // receipts of a joint promise
}

func (p promise) receipts() []int {
	if p.receipt >= 0 {
		return []int{p.receipt}
	}
	return p.joint
}

// promiseDefs are the promise API: in change mode the receipts a call
// creates are returned in Outcome.Receipts; every function is prohibited in
// view calls.
func promiseDefs() []hostDef {
	return []hostDef{
		{"promise_create", 8, 1, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_create")
			idx := s.newReceipt(s.accountID(st[0], st[1]), nil)
			s.addFunctionCall(idx, st[2], st[3], st[4], st[5], st[6], st[7], 0)
			st[0] = idx
		}},
		{"promise_then", 9, 1, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_then")
			after := s.promiseAt(st[0])
			idx := s.newReceipt(s.accountID(st[1], st[2]), after.receipts())
			s.addFunctionCall(idx, st[3], st[4], st[5], st[6], st[7], st[8], 0)
			st[0] = idx
		}},
		{"promise_and", 2, 1, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_and")
			if st[1] > maxPromisesPerCall {
				s.fail(errIntegerOverflow())
			}
			raw := s.memRead(st[0], st[1]*8)
			var joint []int
			for i := uint64(0); i < st[1]; i++ {
				joint = append(joint, s.promiseAt(binary.LittleEndian.Uint64(raw[i*8:])).receipts()...)
			}
			s.checkPromiseCount()
			s.promises = append(s.promises, promise{receipt: -1, joint: joint})
			st[0] = uint64(len(s.promises) - 1)
		}},
		{"promise_batch_create", 2, 1, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_batch_create")
			st[0] = s.newReceipt(s.accountID(st[0], st[1]), nil)
		}},
		{"promise_batch_then", 3, 1, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_batch_then")
			after := s.promiseAt(st[0])
			st[0] = s.newReceipt(s.accountID(st[1], st[2]), after.receipts())
		}},
		{"promise_batch_action_create_account", 1, 0, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_batch_action_create_account")
			s.addAction(st[0], Action{Kind: ActionCreateAccount})
		}},
		{"promise_batch_action_deploy_contract", 3, 0, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_batch_action_deploy_contract")
			code := s.memOrRegister(st[2], st[1])
			s.addAction(st[0], Action{Kind: ActionDeployContract, Code: code})
		}},
		{"promise_batch_action_function_call", 7, 0, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_batch_action_function_call")
			s.addFunctionCall(st[0], st[1], st[2], st[3], st[4], st[5], st[6], 0)
		}},
		{"promise_batch_action_function_call_weight", 8, 0, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_batch_action_function_call_weight")
			s.addFunctionCall(st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7])
		}},
		{"promise_batch_action_transfer", 2, 0, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_batch_action_transfer")
			s.addAction(st[0], Action{Kind: ActionTransfer, Deposit: s.readU128(st[1])})
		}},
		{"promise_batch_action_stake", 4, 0, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_batch_action_stake")
			amount := s.readU128(st[1])
			s.addAction(st[0], Action{Kind: ActionStake, Deposit: amount, PublicKey: s.publicKey(st[2], st[3])})
		}},
		{"promise_batch_action_add_key_with_full_access", 4, 0, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_batch_action_add_key_with_full_access")
			s.addAction(st[0], Action{Kind: ActionAddKey, PublicKey: s.publicKey(st[1], st[2]), Nonce: st[3], FullAccess: true})
		}},
		{"promise_batch_action_add_key_with_function_call", 9, 0, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_batch_action_add_key_with_function_call")
			a := Action{Kind: ActionAddKey, PublicKey: s.publicKey(st[1], st[2]), Nonce: st[3]}
			if allowance := s.readU128(st[4]); !allowance.IsZero() {
				a.Allowance = &allowance
			}
			a.ReceiverID = s.accountID(st[5], st[6])
			if names := string(s.memOrRegister(st[8], st[7])); names != "" {
				for _, name := range strings.Split(names, ",") {
					if name == "" {
						s.fail(errInvalidMethodName())
					}
					a.MethodNames = append(a.MethodNames, name)
				}
			}
			s.addAction(st[0], a)
		}},
		{"promise_batch_action_delete_key", 3, 0, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_batch_action_delete_key")
			s.addAction(st[0], Action{Kind: ActionDeleteKey, PublicKey: s.publicKey(st[1], st[2])})
		}},
		{"promise_batch_action_delete_account", 3, 0, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_batch_action_delete_account")
			s.addAction(st[0], Action{Kind: ActionDeleteAccount, BeneficiaryID: s.accountID(st[1], st[2])})
		}},
		{"promise_results_count", 0, 1, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_results_count")
			st[0] = uint64(len(s.c.PromiseResults))
		}},
		{"promise_result", 2, 1, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_result")
			if st[0] >= uint64(len(s.c.PromiseResults)) {
				s.fail(errInvalidPromiseResultIndex(st[0]))
			}
			res := s.c.PromiseResults[st[0]]
			if res.Status == PromiseSuccessful {
				s.setRegister(st[1], append([]byte(nil), res.Data...))
			}
			st[0] = uint64(res.Status)
		}},
		{"promise_return", 1, 0, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("promise_return")
			p := s.promiseAt(st[0])
			if p.receipt < 0 {
				s.fail(errCannotReturnJoint())
			}
			s.returnedReceipt = p.receipt
		}},
	}
}

func (s *callState) checkPromiseCount() {
	if len(s.promises) >= maxPromisesPerCall {
		n := uint64(len(s.promises) + 1)
		s.fail(hostError("NumberPromisesExceeded", "The number of promises within a FunctionCall exceeds the limit",
			"number_of_promises", n, "limit", uint64(maxPromisesPerCall)))
	}
}

func (s *callState) newReceipt(receiver string, dependsOn []int) uint64 {
	s.charge(costPromiseBase)
	s.checkPromiseCount()
	s.receipts = append(s.receipts, PromiseReceipt{ReceiverID: receiver, DependsOn: dependsOn})
	s.promises = append(s.promises, promise{receipt: len(s.receipts) - 1})
	return uint64(len(s.promises) - 1)
}

func (s *callState) promiseAt(idx uint64) promise {
	if idx >= uint64(len(s.promises)) {
		s.fail(errInvalidPromiseIndex(idx))
	}
	return s.promises[idx]
}

func (s *callState) addAction(idx uint64, a Action) {
	p := s.promiseAt(idx)
	if p.receipt < 0 {
		s.fail(errCannotAppendToJoint())
	}
	s.charge(costPromiseBase)
	s.receipts[p.receipt].Actions = append(s.receipts[p.receipt].Actions, a)
}

func (s *callState) addFunctionCall(idx, nameLen, namePtr, argsLen, argsPtr, amountPtr, gas, weight uint64) {
	name := string(s.memOrRegister(namePtr, nameLen))
	args := s.memOrRegister(argsPtr, argsLen)
	amount := s.readU128(amountPtr)
	s.addAction(idx, Action{Kind: ActionFunctionCall, MethodName: name, Args: args, Deposit: amount, Gas: gas, GasWeight: weight})
}

func (s *callState) accountID(length, ptr uint64) string {
	id := string(s.memOrRegister(ptr, length))
	if !near.ValidAccountID(id) {
		s.fail(errInvalidAccountID())
	}
	return id
}

// publicKey reads a borsh-serialized public key: type 0 (ED25519) with 32
// bytes, or type 1 (SECP256K1) with 64 bytes.
func (s *callState) publicKey(length, ptr uint64) []byte {
	pk := s.memOrRegister(ptr, length)
	switch {
	case len(pk) == 33 && pk[0] == 0, len(pk) == 65 && pk[0] == 1:
		return pk
	}
	s.fail(errInvalidPublicKey())
	return nil
}
