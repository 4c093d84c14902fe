// Package jsonobject reads and writes JSON objects member by member, in
// their order and byte for byte, without decoding values: what keeps an
// answer Nearline serves identical to the upstream's.
package jsonobject
