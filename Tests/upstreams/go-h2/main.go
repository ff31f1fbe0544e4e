// An HTTP/2 upstream from Go's standard library, for the proxy's tests: net/http over TLS, which offers h2 in ALPN
// and speaks HTTP/2 when the client picks it (a server nobody on the project wrote). It listens on 127.0.0.1:0, says
// where on stderr in the words `bearer-proxy serve` uses ("listening on http://HOST:PORT"), and answers a request
// only when it carries a bearer token — the check is on every stream, in the server.
//
//	go-h2 -cert server.pem -key server-key.pem
//
// Each answer says what the server saw: its protocol (x-proto), the connections it had accepted so far
// (x-connections), the method, path and body length; a trailer (x-checked) follows the body. It runs until it is
// killed.
//
//	go-h2 -plain
//
// serves the same in the clear, where net/http speaks HTTP/1.1 only: the HTTP/1.1 upstream of the same checks.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

func main() {
	cert := flag.String("cert", "", "the server certificate (PEM)")
	key := flag.String("key", "", "its private key (PEM)")
	plain := flag.Bool("plain", false, "serve HTTP/1.1 in the clear instead of TLS")
	flag.Parse()

	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var connections int64
	server := &http.Server{
		ConnState: func(_ net.Conn, state http.ConnState) {
			if state == http.StateNew {
				atomic.AddInt64(&connections, 1)
			}
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			body, err := io.ReadAll(r.Body)
			if err != nil {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			w.Header().Set("Trailer", "X-Checked")
			w.Header().Set("X-Proto", r.Proto)
			w.Header().Set("X-Connections", strconv.FormatInt(atomic.LoadInt64(&connections), 10))
			fmt.Fprintf(w, "%s %s %d", r.Method, r.URL.Path, len(body))
			w.Header().Set("X-Checked", "bearer")
		}),
	}
	fmt.Fprintf(os.Stderr, "listening on http://127.0.0.1:%d\n", listener.Addr().(*net.TCPAddr).Port)
	if *plain {
		fmt.Fprintln(os.Stderr, server.Serve(listener))
	} else {
		fmt.Fprintln(os.Stderr, server.ServeTLS(listener, *cert, *key))
	}
	os.Exit(1)
}
