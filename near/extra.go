package near

import (
	"encoding/json"

	"github.com/nearline/nearline/internal/fastjson"
	"github.com/nearline/nearline/internal/jsonobject"
)

// This file keeps the members of accounts and access keys that Nearline
// does not model (a newer nearcore's gas key info, global contract fields,
// ...): decoding gathers them in Extra, encoding writes them back after the
// modelled fields, in the order they came.

// IsAccessKeyField reports whether key is one of the access key members
// Nearline models (nonce, permission).
func IsAccessKeyField(key string) bool { return key == "nonce" || key == "permission" }

// isStampField reports whether key is a member of a query result's block
// stamp (block_height, block_hash).
func isStampField(key string) bool { return key == "block_height" || key == "block_hash" }

// extraMembers returns the members of the JSON object raw that are not
// modelled, as an object in their order, or nil when there are none.
func extraMembers(raw []byte, modelled func(key string) bool) (json.RawMessage, error) {
	extra, err := jsonobject.Filter(raw, func(key string) bool { return !modelled(key) })
	if err != nil || len(extra) <= 2 {
		return nil, err
	}
	return extra, nil
}

// encodeJoined encodes each of values (a json.RawMessage as it is, nothing
// for an empty one) and returns one object with all their members in turn.
func encodeJoined(values ...any) ([]byte, error) {
	objs := make([][]byte, len(values))
	for i, v := range values {
		if raw, ok := v.(json.RawMessage); ok {
			objs[i] = raw
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		objs[i] = b
	}
	return jsonobject.Join(objs...), nil
}

// decodeWithExtra decodes data into plain (the modelled fields) and sets
// extra to the members modelled does not accept.
func decodeWithExtra(data []byte, plain any, extra *json.RawMessage, modelled func(key string) bool) error {
	if err := fastjson.Unmarshal(data, plain); err != nil {
		return err
	}
	members, err := extraMembers(data, modelled)
	if err != nil {
		return err
	}
	*extra = members
	return nil
}

// MarshalJSON encodes nonce, permission, then the Extra members.
func (k AccessKeyView) MarshalJSON() ([]byte, error) {
	type plain AccessKeyView
	return encodeJoined(plain(k), k.Extra)
}

// UnmarshalJSON decodes nonce and permission and keeps every other member
// in Extra.
func (k *AccessKeyView) UnmarshalJSON(data []byte) error {
	type plain AccessKeyView
	*k = AccessKeyView{}
	return decodeWithExtra(data, (*plain)(k), &k.Extra, IsAccessKeyField)
}

// MarshalJSON encodes the key (its Extra members included), then the block
// stamp, as nearcore orders a view_access_key result.
func (r AccessKeyResult) MarshalJSON() ([]byte, error) {
	return encodeJoined(r.AccessKeyView, r.BlockStamp)
}

// UnmarshalJSON decodes a view_access_key result: the block stamp, and the
// key with every other member.
func (r *AccessKeyResult) UnmarshalJSON(data []byte) error {
	*r = AccessKeyResult{}
	if err := json.Unmarshal(data, &r.BlockStamp); err != nil {
		return err
	}
	key, err := jsonobject.Filter(data, func(key string) bool { return !isStampField(key) })
	if err != nil {
		return err
	}
	return json.Unmarshal(key, &r.AccessKeyView)
}

// UnmarshalJSON decodes a view_account result: the account, its members
// Nearline does not model in Extra, and the block stamp.
func (v *AccountView) UnmarshalJSON(data []byte) error {
	type plain AccountView
	*v = AccountView{}
	return decodeWithExtra(data, (*plain)(v), &v.Extra, func(key string) bool { return IsAccountField(key) || isStampField(key) })
}

// isGenesisAccountField reports whether key is a member of a genesis
// account Nearline models or knows to leave out of view_account (version).
func isGenesisAccountField(key string) bool { return IsAccountField(key) || key == "version" }

// MarshalJSON encodes the modelled fields, then the Extra members.
func (a GenesisAccount) MarshalJSON() ([]byte, error) {
	type plain GenesisAccount
	return encodeJoined(plain(a), a.Extra)
}

// UnmarshalJSON decodes the modelled fields and keeps every other member
// in Extra.
func (a *GenesisAccount) UnmarshalJSON(data []byte) error {
	type plain GenesisAccount
	*a = GenesisAccount{}
	return decodeWithExtra(data, (*plain)(a), &a.Extra, isGenesisAccountField)
}
