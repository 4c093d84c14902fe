package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
)

// docUpstream serves block documents as FastNEAR's neardata does:
// GET /v0/block/{height} answers the document (404 BLOCK_DOES_NOT_EXIST
// past the last one), GET /v0/last_block/final redirects to the last
// height's document. Documents are rendered before the server starts, so
// serving costs the benchmark process a copy, not a rendering.
type docUpstream struct {
	first uint64
	docs  [][]byte

	documents, heads, beyond atomic.Int64
	bytes                    atomic.Int64
	srv                      *httptest.Server
}

func newDocUpstream(first uint64, docs [][]byte) *docUpstream {
	u := &docUpstream{first: first, docs: docs}
	last := first + uint64(len(docs)) - 1
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v0/block/{height}", func(w http.ResponseWriter, r *http.Request) {
		h, err := strconv.ParseUint(r.PathValue("height"), 10, 64)
		if err != nil {
			http.Error(w, "bad height", http.StatusBadRequest)
			return
		}
		if h < first || h > last {
			u.beyond.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"The block is too far in the future","type":"BLOCK_DOES_NOT_EXIST"}`))
			return
		}
		doc := docs[h-first]
		u.documents.Add(1)
		u.bytes.Add(int64(len(doc)))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
		_, _ = w.Write(doc)
	})
	mux.HandleFunc("GET /v0/last_block/final", func(w http.ResponseWriter, r *http.Request) {
		u.heads.Add(1)
		http.Redirect(w, r, fmt.Sprintf("/v0/block/%d", last), http.StatusFound)
	})
	u.srv = httptest.NewServer(mux)
	return u
}

func (u *docUpstream) url() string { return u.srv.URL }

func (u *docUpstream) close() { u.srv.Close() }
