package store

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Enum types of the columns whose labels come from the upstream (migration
// 00012): a label a type lacks is added before the commit that writes it.
const (
	labelActionKind  = "action_kind"
	labelReceiptKind = "receipt_kind"
	labelChangeType  = "state_change_type"
	labelChangeCause = "state_change_cause"
)

// maxLabelBytes is PostgreSQL's limit on an enum label.
const maxLabelBytes = 63

// labelSet collects the labels of a batch, by enum type.
type labelSet map[string]map[string]bool

func (l labelSet) add(typ, label string) {
	seen := l[typ]
	if seen == nil {
		seen = map[string]bool{}
		l[typ] = seen
	}
	if !seen[label] {
		seen[label] = true
	}
}

// labels remembers the labels known to exist, by enum type.
type labels struct {
	mu    sync.Mutex
	known map[string][]string // sorted
}

// ensureLabels adds to their types the labels of want that they lack, each
// in its sorted place, in transactions of their own (a label added in a
// transaction cannot be written before it commits). Another writer adding
// the same label at once is harmless.
func (s *Store) ensureLabels(ctx context.Context, want labelSet) error {
	s.labels.mu.Lock()
	defer s.labels.mu.Unlock()
	if s.labels.known == nil {
		s.labels.known = map[string][]string{}
	}
	for typ, set := range want {
		missing := s.missingLabels(typ, set)
		if len(missing) == 0 {
			continue
		}
		if err := s.loadLabels(ctx, typ); err != nil {
			return err
		}
		for _, label := range s.missingLabels(typ, set) {
			if len(label) > maxLabelBytes {
				return fmt.Errorf("%s %q: longer than PostgreSQL's %d-byte enum labels", typ, label, maxLabelBytes)
			}
			known := s.labels.known[typ]
			var before *string
			if i, _ := slices.BinarySearch(known, label); i < len(known) {
				before = &known[i]
			}
			var stmt string
			err := s.pool.QueryRow(ctx, `SELECT format('ALTER TYPE %I ADD VALUE IF NOT EXISTS %L', $1::text, $2::text)
				|| CASE WHEN $3::text IS NULL THEN '' ELSE format(' BEFORE %L', $3::text) END`, typ, label, before).Scan(&stmt)
			if err != nil {
				return fmt.Errorf("add %s %q: %w", typ, label, err)
			}
			if _, err := s.pool.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("add %s %q: %w", typ, label, err)
			}
			if err := s.loadLabels(ctx, typ); err != nil {
				return err
			}
		}
	}
	return nil
}

// missingLabels returns the labels of set not known to exist in typ, sorted.
func (s *Store) missingLabels(typ string, set map[string]bool) []string {
	var out []string
	for label := range set {
		if _, ok := slices.BinarySearch(s.labels.known[typ], label); !ok {
			out = append(out, label)
		}
	}
	slices.Sort(out)
	return out
}

// loadLabels reads typ's labels.
func (s *Store) loadLabels(ctx context.Context, typ string) error {
	rows, _ := s.pool.Query(ctx, `SELECT enumlabel::text FROM pg_enum WHERE enumtypid = $1::regtype`, typ)
	known, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("read the labels of %s: %w", typ, err)
	}
	slices.Sort(known)
	s.labels.known[typ] = known
	return nil
}
