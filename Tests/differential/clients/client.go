// The Go net/http client of the capture (issue #24 condition 4): what a Go program sends to the recorder at $BASE.
// Run by capture.sh with Debian's golang-go.
package main

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

func drain(response *http.Response, err error) {
	if err != nil {
		panic(err)
	}
	// Read to the end so that the connection goes back to the pool and carries the next request.
	io.Copy(io.Discard, response.Body)
	response.Body.Close()
}

func main() {
	base := os.Getenv("BASE")
	client := &http.Client{}
	drain(client.Get(base + "/items?q=" + url.QueryEscape("café & co") + "&page=2"))
	drain(client.Head(base + "/items/7"))
	drain(client.Post(base+"/items", "application/json", strings.NewReader(`{"name":"Zoë","count":2}`)))
	drain(client.PostForm(base+"/login", url.Values{"user": {"zoë"}, "password": {"p@ss word"}}))
	// A body of unknown length: net/http sends it chunked.
	reader, writer := io.Pipe()
	go func() {
		writer.Write([]byte(`{"part": 1}` + "\n"))
		writer.Write([]byte(`{"part": 2}` + "\n"))
		writer.Close()
	}()
	drain(client.Post(base+"/stream", "application/x-ndjson", reader))
	request, _ := http.NewRequest(http.MethodDelete, base+"/items/7", nil)
	request.Header.Set("Authorization", "Bearer client-own-token")
	drain(client.Do(request))
}
