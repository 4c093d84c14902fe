package nearvm

import (
	"context"
	"fmt"
	"math"
)

// storageDefs are the storage host functions. Writes and removes go to an
// overlay over the caller's Storage and are reported in order in the
// Outcome; they are prohibited in view calls.
func storageDefs() []hostDef {
	return []hostDef{
		{"storage_write", 5, 1, func(ctx context.Context, s *callState, st []uint64) {
			s.prohibitedInView("storage_write")
			key := s.storageKey(st[0], st[1])
			value := s.memOrRegister(st[3], st[2])
			if len(value) > maxLengthStorageValue {
				s.fail(errLimit("ValueLengthExceeded", "a storage value", uint64(len(value)), maxLengthStorageValue))
			}
			value = append([]byte(nil), value...)
			s.chargeBytes(costStorageBase, costStorageByte, uint64(len(key)+len(value)))
			old := s.get(ctx, key)
			s.overlay[string(key)] = cachedRead{value: value, found: true}
			s.writes = append(s.writes, Write{Key: key, Value: value})
			if old.found {
				s.storageUsage = s.storageUsage - uint64(len(old.value)) + uint64(len(value))
				s.setRegister(st[4], old.value)
				st[0] = 1
				return
			}
			s.storageUsage += uint64(len(key)+len(value)) + storageRecordOverhead
			st[0] = 0
		}},
		{"storage_read", 3, 1, func(ctx context.Context, s *callState, st []uint64) {
			_, v := s.lookup(ctx, st[0], st[1])
			if !v.found {
				st[0] = 0
				return
			}
			s.setRegister(st[2], v.value)
			st[0] = 1
		}},
		{"storage_remove", 3, 1, func(ctx context.Context, s *callState, st []uint64) {
			s.prohibitedInView("storage_remove")
			key, old := s.lookup(ctx, st[0], st[1])
			if !old.found {
				st[0] = 0
				return
			}
			s.overlay[string(key)] = cachedRead{}
			s.writes = append(s.writes, Write{Key: key, Removed: true})
			s.storageUsage -= uint64(len(key)+len(old.value)) + storageRecordOverhead
			s.setRegister(st[2], old.value)
			st[0] = 1
		}},
		{"storage_has_key", 2, 1, func(ctx context.Context, s *callState, st []uint64) {
			_, v := s.lookup(ctx, st[0], st[1])
			st[0] = boolU64(v.found)
		}},
		// The iterator functions were removed from the protocol; nearcore
		// answers every call with HostError::Deprecated.
		{"storage_iter_prefix", 2, 1, func(_ context.Context, s *callState, _ []uint64) {
			s.fail(errDeprecated("storage_iter_prefix"))
		}},
		{"storage_iter_range", 4, 1, func(_ context.Context, s *callState, _ []uint64) {
			s.fail(errDeprecated("storage_iter_range"))
		}},
		{"storage_iter_next", 3, 1, func(_ context.Context, s *callState, _ []uint64) {
			s.fail(errDeprecated("storage_iter_next"))
		}},
	}
}

func (s *callState) storageKey(length, ptr uint64) []byte {
	if length != math.MaxUint64 && length > maxLengthStorageKey {
		s.fail(errLimit("KeyLengthExceeded", "a storage key", length, maxLengthStorageKey))
	}
	key := s.memOrRegister(ptr, length)
	if len(key) > maxLengthStorageKey {
		s.fail(errLimit("KeyLengthExceeded", "a storage key", uint64(len(key)), maxLengthStorageKey))
	}
	return append([]byte(nil), key...)
}

// lookup reads the key of length at ptr (storageKey), charges the storage
// base cost and its bytes, and returns it with its value (get): the start
// of storage_read, storage_remove and storage_has_key.
func (s *callState) lookup(ctx context.Context, length, ptr uint64) ([]byte, cachedRead) {
	key := s.storageKey(length, ptr)
	s.chargeBytes(costStorageBase, costStorageByte, uint64(len(key)))
	return key, s.get(ctx, key)
}

// get reads key through the call's own writes, then the per-call cache,
// then Storage.
func (s *callState) get(ctx context.Context, key []byte) cachedRead {
	if v, ok := s.overlay[string(key)]; ok {
		return v
	}
	if v, ok := s.reads[string(key)]; ok {
		return v
	}
	if s.st == nil {
		return cachedRead{}
	}
	value, found, err := s.st.Get(ctx, key)
	if err != nil {
		s.failInternal(fmt.Errorf("read contract state: %w", err))
	}
	v := cachedRead{value: value, found: found}
	s.reads[string(key)] = v
	return v
}
