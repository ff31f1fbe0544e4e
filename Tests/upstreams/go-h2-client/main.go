// An HTTP/2 client from golang.org/x/net/http2, for the proxy's tests: Go's own HTTP/2 client (a client nobody on the
// project wrote) speaking HTTP/2 with prior knowledge in the clear (h2c, RFC 9113 §3.3) to the proxy's TCP listener.
//
//	go-h2-client -url http://127.0.0.1:PORT/api -n 20 -upload 1048576
//
// sends, all at once, n GETs to URL/n/I and one POST to URL/upload whose body is `upload` bytes of a fixed pattern,
// then one more GET to URL/after on the connection that is left. The upstream is expected to put the lower-case hex
// SHA-256 of the POST's body somewhere in its answer; the client checks its own digest of what it sent is there.
//
// It prints one JSON summary on stdout: every exchange's method, path, status and protocol (resp.Proto), the
// connections it dialled and went on, and the upload's size, digest and whether the answer echoed it. Response
// bodies are never printed: an upstream's echo may carry the proxy's token.
package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
)

type exchange struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status"`
	Proto  string `json:"proto"`
	Bytes  int    `json:"bytes"`
	Error  string `json:"error,omitempty"`
}

type summary struct {
	// Dials counts the transport's calls to its dialer: each is a new TCP connection.
	Dials int64 `json:"dials"`
	// Connections are the local addresses of the connections the exchanges went on (httptrace GotConn), distinct.
	Connections  []string   `json:"connections"`
	Exchanges    []exchange `json:"exchanges"`
	UploadBytes  int        `json:"uploadBytes"`
	UploadSHA256 string     `json:"uploadSHA256"`
	UploadEchoed bool       `json:"uploadEchoed"`
}

func main() {
	base := flag.String("url", "", "the proxy's route, http://HOST:PORT/PREFIX")
	count := flag.Int("n", 20, "concurrent GETs")
	size := flag.Int("upload", 1<<20, "bytes in the POST's body")
	flag.Parse()
	if *base == "" {
		fmt.Fprintln(os.Stderr, "go-h2-client: -url is required")
		os.Exit(2)
	}

	var dials int64
	transport := &http2.Transport{
		// AllowHTTP with a plain dialer is x/net's h2c: HTTP/2 from the first byte, no TLS, no Upgrade.
		AllowHTTP: true,
		DialTLS: func(network, addr string, _ *tls.Config) (net.Conn, error) {
			atomic.AddInt64(&dials, 1)
			return net.Dial(network, addr)
		},
	}
	client := &http.Client{Transport: transport, Timeout: 60 * time.Second}

	var lock sync.Mutex
	connections := map[string]bool{}
	send := func(method, path string, body []byte) (exchange, []byte) {
		result := exchange{Method: method, Path: path}
		var reader io.Reader
		if body != nil {
			reader = bytes.NewReader(body)
		}
		request, err := http.NewRequest(method, *base+path, reader)
		if err != nil {
			result.Error = err.Error()
			return result, nil
		}
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			lock.Lock()
			connections[info.Conn.LocalAddr().String()] = true
			lock.Unlock()
		}}
		request = request.WithContext(httptrace.WithClientTrace(request.Context(), trace))
		response, err := client.Do(request)
		if err != nil {
			result.Error = err.Error()
			return result, nil
		}
		defer response.Body.Close()
		answer, err := io.ReadAll(response.Body)
		if err != nil {
			result.Error = err.Error()
		}
		result.Status = response.StatusCode
		result.Proto = response.Proto
		result.Bytes = len(answer)
		return result, answer
	}

	upload := make([]byte, *size)
	for i := range upload {
		upload[i] = byte(i*31 + i/251)
	}
	digest := sha256.Sum256(upload)
	out := summary{UploadBytes: len(upload), UploadSHA256: hex.EncodeToString(digest[:])}

	exchanges := make([]exchange, *count+1)
	var group sync.WaitGroup
	for i := 0; i < *count; i++ {
		group.Add(1)
		go func(i int) {
			defer group.Done()
			exchanges[i], _ = send("GET", fmt.Sprintf("/n/%d", i), nil)
		}(i)
	}
	group.Add(1)
	go func() {
		defer group.Done()
		var answer []byte
		exchanges[*count], answer = send("POST", "/upload", upload)
		out.UploadEchoed = bytes.Contains(answer, []byte(out.UploadSHA256))
	}()
	group.Wait()
	after, _ := send("GET", "/after", nil)
	out.Exchanges = append(exchanges, after)

	out.Dials = atomic.LoadInt64(&dials)
	for address := range connections {
		out.Connections = append(out.Connections, address)
	}
	sort.Strings(out.Connections)
	encoded, _ := json.Marshal(out)
	fmt.Println(string(encoded))
}
