package near

import "strings"

// ValidAccountID reports whether id is a valid NEAR account id: 2 to 64
// characters, parts of [a-z0-9] joined by single '-', '_' or '.', not
// starting or ending with a separator.
func ValidAccountID(id string) bool {
	if len(id) < 2 || len(id) > 64 {
		return false
	}
	prevSep := true
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			prevSep = false
		case c == '-' || c == '_' || c == '.':
			if prevSep {
				return false
			}
			prevSep = true
		default:
			return false
		}
	}
	return !prevSep
}

// IsImplicitAccount reports whether id is a NEAR-implicit (64 hex) or
// ETH-implicit (0x + 40 hex) account id.
func IsImplicitAccount(id string) bool {
	isHex := func(s string) bool {
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	if len(id) == 64 {
		return isHex(id)
	}
	return len(id) == 42 && strings.HasPrefix(id, "0x") && isHex(id[2:])
}

// ValidPublicKey reports whether key is "ed25519:<base58 32 bytes>" or
// "secp256k1:<base58 64 bytes>". Key text longer than its curve's bound
// (Base58MaxLen) is refused without decoding.
func ValidPublicKey(key string) bool {
	curve, data, ok := strings.Cut(key, ":")
	if !ok {
		return false
	}
	size := 0
	switch curve {
	case "ed25519":
		size = 32
	case "secp256k1":
		size = 64
	default:
		return false
	}
	b, err := Base58DecodeMax(data, size)
	return err == nil && len(b) == size
}
