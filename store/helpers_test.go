package store_test

import (
	"io/fs"
	"strings"

	"github.com/nearline/nearline/migrations"
)

func storeMigrationCount() (int, error) {
	n := 0
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".sql") {
			n++
		}
		return err
	})
	return n, err
}
