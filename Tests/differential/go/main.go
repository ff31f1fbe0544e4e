// Command differential is Go's net/http as one of the three reference parsers of the differential harness
// (issue #24 condition 2): it frames a whole byte stream with http.ReadRequest (or http.ReadResponse) in a loop
// and prints what it found as JSON, in the message model the Swift tests compare (Tests/differential/README.md).
//
//	differential [-responses] FILE   one stream from FILE ("-" for stdin), one JSON document
//	differential [-responses] -batch one stream per stdin line: base64 bytes, a space, comma-separated read
//	                                 split offsets (may be empty); one JSON line out per line in
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Message is one framed message. Fields are [name, value] pairs grouped by name in sorted name order, each name's
// values in the order they came: net/http keeps a map, so the order across names is lost (README: how we compare).
type Message struct {
	Method   string      `json:"method,omitempty"`
	Target   string      `json:"target,omitempty"`
	Status   *int        `json:"status,omitempty"`
	Version  string      `json:"version"`
	Fields   [][2]string `json:"fields"`
	Body     string      `json:"body"`
	Trailers [][2]string `json:"trailers"`
}

// Stream is the verdict on a whole byte stream.
type Stream struct {
	Messages []Message `json:"messages"`
	// End is "clean" (the input ended between messages), "incomplete" (it ended inside one, nothing refused),
	// "error" (refused), "close" (a message ended the connection), or "upgrade" (the rest is another protocol).
	End      string  `json:"end"`
	Error    *string `json:"error"`
	Leftover int     `json:"leftover"`
}

// splitReader hands out its bytes in reads that end at the given offsets: the read splits of the harness.
//
// Past the end of a request stream it does not return io.EOF: bufio's ReadLine hands back a partial last line as if
// it were whole when the reader ends, so `Host: x` cut short would read as a complete field. It panics with
// needMoreData instead, which frame recovers as "the parser wanted more bytes" — what a server blocked in read
// would be. A response stream ends with io.EOF: that ends a body delimited by the close (RFC 9112 §6.3 rule 8).
type splitReader struct {
	data        []byte
	splits      []int
	offset      int
	endsWithEOF bool
}

type needMoreData struct{}

func (r *splitReader) Read(p []byte) (int, error) {
	if r.offset >= len(r.data) {
		if r.endsWithEOF {
			return 0, io.EOF
		}
		panic(needMoreData{})
	}
	end := len(r.data)
	for _, split := range r.splits {
		if split > r.offset {
			end = split
			break
		}
	}
	n := copy(p, r.data[r.offset:end])
	r.offset += n
	return n, nil
}

// fields reads the head's field lines again with net/textproto, the parser ReadRequest itself uses, because
// ReadRequest moves Host and the framing fields out of Header; this keeps every value of every name.
func fields(head []byte) [][2]string {
	reader := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
	if _, err := reader.ReadLine(); err != nil {
		return nil
	}
	header, _ := reader.ReadMIMEHeader()
	return sortedPairs(header)
}

// latin1 prints each byte as the rune of the same number, so that any byte survives JSON (encoding/json would
// replace invalid UTF-8) and compares as itself; h11 decodes Latin-1 the same way.
func latin1(text string) string {
	runes := make([]rune, len(text))
	for index := 0; index < len(text); index++ {
		runes[index] = rune(text[index])
	}
	return string(runes)
}

func sortedPairs(header map[string][]string) [][2]string {
	names := make([]string, 0, len(header))
	for name := range header {
		names = append(names, name)
	}
	sort.Strings(names)
	pairs := [][2]string{}
	for _, name := range names {
		for _, value := range header[name] {
			pairs = append(pairs, [2]string{latin1(strings.ToLower(name)), latin1(value)})
		}
	}
	return pairs
}

// isUpgrade is when a server stops reading HTTP: CONNECT, or Upgrade with the "upgrade" connection option
// (RFC 9110 §7.8, §9.3.6). net/http leaves this to the handler that hijacks the connection; the harness decides it
// the way llhttp does, so that bytes after the handshake are compared as leftover, not as requests.
func isUpgrade(method string, header http.Header) bool {
	if method == "CONNECT" {
		return true
	}
	if header.Get("Upgrade") == "" {
		return false
	}
	for _, value := range header.Values("Connection") {
		for _, option := range strings.Split(value, ",") {
			if strings.EqualFold(strings.TrimSpace(option), "upgrade") {
				return true
			}
		}
	}
	return false
}

func frame(data []byte, splits []int, responses bool) (stream Stream) {
	source := &splitReader{data: data, splits: splits, endsWithEOF: responses}
	reader := bufio.NewReader(source)
	stream = Stream{Messages: []Message{}}
	consumed := 0
	defer func() {
		if recovered := recover(); recovered != nil {
			if _, ok := recovered.(needMoreData); !ok {
				panic(recovered)
			}
			stream.End = "incomplete"
			if consumed == len(data) {
				stream.End = "clean"
			}
			stream.Error = nil
			stream.Leftover = len(data) - consumed
		}
	}()
	position := func() int { return source.offset - reader.Buffered() }
	fail := func(err error) Stream {
		// Ending inside a message is not a refusal: the peer may still send the rest.
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			stream.End = "incomplete"
		} else {
			stream.End = "error"
			text := err.Error()
			stream.Error = &text
		}
		stream.Leftover = len(data) - consumed
		return stream
	}
	for {
		if _, err := reader.Peek(1); err == io.EOF {
			stream.End = "clean"
			return stream
		}
		var message Message
		var body io.ReadCloser
		var trailer func() http.Header
		var closes, upgrade bool
		if responses {
			response, err := http.ReadResponse(reader, nil)
			if err != nil {
				return fail(err)
			}
			status := response.StatusCode
			message = Message{Status: &status, Version: response.Proto}
			body, trailer, closes = response.Body, func() http.Header { return response.Trailer }, response.Close
		} else {
			request, err := http.ReadRequest(reader)
			if err != nil {
				return fail(err)
			}
			message = Message{Method: latin1(request.Method), Target: latin1(request.RequestURI), Version: request.Proto}
			body, trailer, closes = request.Body, func() http.Header { return request.Trailer }, request.Close
			upgrade = isUpgrade(request.Method, request.Header)
		}
		content, err := io.ReadAll(body)
		if err != nil {
			return fail(err)
		}
		end := position()
		message.Fields = fields(data[consumed:end])
		message.Body = base64.StdEncoding.EncodeToString(content)
		message.Trailers = sortedPairs(trailer())
		stream.Messages = append(stream.Messages, message)
		consumed = end
		switch {
		case upgrade:
			stream.End = "upgrade"
		case closes:
			stream.End = "close"
		default:
			continue
		}
		stream.Leftover = len(data) - consumed
		return stream
	}
}

func batch(responses bool) error {
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 64<<20)
	output := bufio.NewWriter(os.Stdout)
	defer output.Flush()
	encoder := json.NewEncoder(output)
	for scanner.Scan() {
		line := strings.SplitN(scanner.Text(), " ", 2)
		data, err := base64.StdEncoding.DecodeString(line[0])
		if err != nil {
			return err
		}
		var splits []int
		if len(line) == 2 && line[1] != "" {
			for _, field := range strings.Split(line[1], ",") {
				split, err := strconv.Atoi(field)
				if err != nil {
					return err
				}
				splits = append(splits, split)
			}
		}
		if err := encoder.Encode(frame(data, splits, responses)); err != nil {
			return err
		}
	}
	return scanner.Err()
}

func main() {
	responses := flag.Bool("responses", false, "frame responses (to GET requests) instead of requests")
	batchMode := flag.Bool("batch", false, "one base64 stream per stdin line, one JSON line out per line")
	flag.Parse()
	var err error
	if *batchMode {
		err = batch(*responses)
	} else if flag.NArg() == 1 {
		var data []byte
		if flag.Arg(0) == "-" {
			data, err = io.ReadAll(os.Stdin)
		} else {
			data, err = os.ReadFile(flag.Arg(0))
		}
		if err == nil {
			err = json.NewEncoder(os.Stdout).Encode(frame(data, nil, *responses))
		}
	} else {
		err = errors.New("usage: differential [-responses] (-batch | FILE)")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "differential:", err)
		os.Exit(2)
	}
}
