package nearvm

import (
	"context"
	"fmt"
	"testing"
)

func TestProbe(t *testing.T) {
	r := newTestRuntime(t, Config{})
	f := loadFixture(t, "status_message")
	st := newMemStorage()
	out, err := r.Call(context.Background(), f.Code, "", "set_status", changeCtx("c.near", "bob.near", map[string]string{"message": "hello"}, U128{}), st)
	fmt.Printf("%v %+v\n", err, out)
	for _, w := range out.Writes {
		fmt.Printf("%q %q\n", w.Key, w.Value)
	}
}
