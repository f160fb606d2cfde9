// Command echo is the reference for postern-bench: the least a stdio JSON-RPC
// server can do. For each line read it writes one fixed-shape response that
// echoes the request's id, and flushes. Lines without an id (notifications)
// get no answer. It does not parse JSON; it finds the id with a byte scan.
package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
)

var (
	idKey  = []byte(`"id":`)
	prefix = []byte(`{"jsonrpc":"2.0","id":`)
	suffix = []byte(`,"result":{"content":[{"type":"text","text":"echo"}],"isError":false}}` + "\n")
)

// findID returns the raw id value of a request line, or nil. It is enough for
// numbers and simple strings, which is what the bench sends.
func findID(line []byte) []byte {
	i := bytes.Index(line, idKey)
	if i < 0 {
		return nil
	}
	v := bytes.TrimLeft(line[i+len(idKey):], " \t")
	end := bytes.IndexAny(v, ",}")
	if end <= 0 {
		return nil
	}
	return bytes.TrimRight(v[:end], " \t")
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	var long []byte
	for {
		line, err := in.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = in.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if id := findID(line); id != nil {
			out.Write(prefix)
			out.Write(id)
			out.Write(suffix)
			if out.Flush() != nil {
				os.Exit(1)
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			os.Exit(1)
		}
	}
}
