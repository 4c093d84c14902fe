package store

// MigrateTo applies the embedded migrations up to version, for tests of
// upgrades from an older layout.
var MigrateTo = migrateTo
