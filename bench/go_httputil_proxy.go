// The Go peer of bench/run.sh: net/http/httputil.ReverseProxy doing nginx-proxy's job.
// Usage: BENCH_TOKEN=... GOMAXPROCS=1 go_httputil_proxy LISTEN UPSTREAM (both host:port).
package main

import (
	"net/http"
	"net/http/httputil"
	"os"
	"strings"
)

func main() {
	listen, upstream, auth := os.Args[1], os.Args[2], "Bearer "+os.Getenv("BENCH_TOKEN")
	proxy := &httputil.ReverseProxy{
		Director: func(r *http.Request) {
			r.URL.Scheme, r.URL.Host = "http", upstream
			r.URL.Path = strings.TrimPrefix(r.URL.Path, "/bench") // nginx: location /bench/ → /
			r.Header.Set("Authorization", auth)
			r.Header["X-Forwarded-For"] = nil // nginx-proxy adds none
		},
		// No Proxy: never the environment's proxy. 64 idle upstream connections, as nginx's keepalive 64.
		Transport: &http.Transport{MaxIdleConnsPerHost: 64},
	}
	panic(http.ListenAndServe(listen, proxy))
}
