// Package retry is Nearline's one retry loop: capped exponential backoff
// with jitter, bounded by attempts or by time, that stops when ctx ends.
package retry
