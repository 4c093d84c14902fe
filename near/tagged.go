package near

import (
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/internal/fastjson"
)

// member is one modelled member of a serde externally tagged enum ({"<tag>":
// body}) that Go holds as a struct E with a pointer field per member.
type member[E any] struct {
	tag string
	// body returns the member's field in e; nil when it is unset.
	body func(e *E) any
	// decode sets the member's field in e from body; false, with the field
	// left unset, when body is not of the modelled shape.
	decode func(e *E, body []byte) (bool, error)
}

// memberOf is the member tag held in the field that field returns.
func memberOf[E, T any](tag string, field func(*E) **T) member[E] {
	return member[E]{
		tag: tag,
		body: func(e *E) any {
			if p := *field(e); p != nil {
				return p
			}
			return nil
		},
		decode: func(e *E, body []byte) (bool, error) {
			p := new(T)
			*field(e) = p
			return true, fastjson.Unmarshal(body, p)
		},
	}
}

// setMember returns the first of members set in e and its body; ok is
// false when none is.
func setMember[E any](e *E, members []member[E]) (m member[E], body any, ok bool) {
	for _, m := range members {
		if body := m.body(e); body != nil {
			return m, body, true
		}
	}
	return member[E]{}, nil, false
}

// marshalTagged encodes the first of members set in e as {"<tag>": body},
// else other, the value kept as it came; what names the enum in errors
// ("action").
func marshalTagged[E any](e *E, members []member[E], other json.RawMessage, what string) ([]byte, error) {
	if m, body, ok := setMember(e, members); ok {
		return json.Marshal(map[string]any{m.tag: body})
	}
	if other != nil {
		return other, nil
	}
	return nil, fmt.Errorf("encode %s: no %s set", what, what)
}

// unmarshalTagged decodes data, {"<tag>": body}, into the member of e with
// that tag, or, when no member takes it (another tag, or a body of a shape
// not modelled), into other as it came; what names the enum in errors
// ("action").
func unmarshalTagged[E any](e *E, data []byte, what string, members []member[E], other *json.RawMessage) error {
	tagged, err := tags(data)
	if err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	if len(tagged) != 1 {
		return fmt.Errorf("decode %s: want one tag, got %d", what, len(tagged))
	}
	tag, body := tagged[0].name, tagged[0].body
	for _, m := range members {
		if m.tag != tag {
			continue
		}
		ok, err := m.decode(e, body)
		if err != nil {
			return fmt.Errorf("decode %s %s: %w", tag, what, err)
		}
		if ok {
			return nil
		}
	}
	*other = append(json.RawMessage(nil), data...)
	return nil
}
