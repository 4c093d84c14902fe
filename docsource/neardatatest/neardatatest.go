// Package neardatatest serves block documents as FastNEAR's neardata
// does, for the tests and the bench: GET /v0/block/{height} answers a
// height's document as given (404 BLOCK_DOES_NOT_EXIST outside the
// documents), GET /v0/last_block/final redirects to the last height's.
package neardatatest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
)

// Server serves docs[i] as the document of height first+i.
type Server struct {
	// Documents and Heads count the documents served and the final heads
	// asked for.
	Documents, Heads atomic.Int64

	srv *httptest.Server
}

// New starts a Server of docs from height first; the caller closes it.
// The documents are served as they are, without a copy: they must not
// change while it runs.
func New(first uint64, docs [][]byte) *Server {
	s := &Server{}
	last := first + uint64(len(docs)) - 1
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v0/block/{height}", func(w http.ResponseWriter, r *http.Request) {
		h, err := strconv.ParseUint(r.PathValue("height"), 10, 64)
		if err != nil {
			http.Error(w, "bad height", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if h < first || h > last {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"The block is too far in the future","type":"BLOCK_DOES_NOT_EXIST"}`))
			return
		}
		doc := docs[h-first]
		s.Documents.Add(1)
		w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
		_, _ = w.Write(doc)
	})
	mux.HandleFunc("GET /v0/last_block/final", func(w http.ResponseWriter, r *http.Request) {
		s.Heads.Add(1)
		http.Redirect(w, r, fmt.Sprintf("/v0/block/%d", last), http.StatusFound)
	})
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the server's base URL, for --upstream.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }
