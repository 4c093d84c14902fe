// Package jsonobject reads and writes JSON objects member by member, in
// their order and byte for byte, without decoding values: what keeps an
// answer Nearline serves identical to the upstream's.
//
// Everything it reads goes through one tokenizer (scan.go), which accepts
// exactly what encoding/json's json.Valid accepts. Parse, Each, Filter,
// Items and Rewrite (which keeps it) pass over whitespace between tokens;
// the compact scan (SkipValue, ScanObject, ScanArray), which takes block
// documents apart, refuses it with ErrNotCompact so that a document is
// compacted once and scanned again.
package jsonobject
