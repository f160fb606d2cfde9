package jsonrpc

import (
	"bytes"
	"encoding/json"

	"github.com/tidwall/gjson"
)

// Message is one parsed JSON-RPC message: a request, a notification or a response.
type Message struct {
	ID     json.RawMessage // a string or number as written; nil on a notification
	Method string
	Params json.RawMessage // an object or an array; nil when absent or null

	// A response's members; IsResponse says whether the message is one.
	Result json.RawMessage
	Error  *Error

	response  bool
	hasID     bool // the message has an id member, of whatever type
	hasMethod bool
}

// IsNotification reports whether the message is a request without an id.
func (m *Message) IsNotification() bool { return !m.response && m.ID == nil }

// IsResponse reports whether the message answers a request: it has an id and
// a result or an error, and no method.
func (m *Message) IsResponse() bool { return m.response }

// Parse reads one message (not an array). It returns a JSON-RPC error for
// anything that is not a valid request, notification or response, with the
// message as far as it could be read so that Refusal can answer it.
func Parse(b []byte) (*Message, *Error) {
	if !gjson.ValidBytes(b) {
		return nil, NewError(CodeParseError, "Parse error: the line is not valid JSON; send one JSON-RPC message per line")
	}
	root := gjson.ParseBytes(b)
	if !root.IsObject() {
		return nil, NewError(CodeInvalidRequest, "Invalid Request: a message must be a JSON object")
	}
	m := &Message{}
	var idRes, verRes, methRes, params, result, errRes gjson.Result
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			idRes = v
		case "jsonrpc":
			verRes = v
		case "method":
			methRes = v
		case "params":
			params = v
		case "result":
			if !result.Exists() {
				result = v
			}
		case "error":
			if !errRes.Exists() {
				errRes = v
			}
		}
		return true
	})
	m.hasID, m.hasMethod = idRes.Exists(), methRes.Exists()
	validID := idRes.Type == gjson.String || idRes.Type == gjson.Number
	if validID {
		m.ID = raw(idRes)
	}
	if !m.hasMethod && m.hasID && (result.Exists() || errRes.Exists()) {
		// A response: its id is matched by Conn, whatever it is, so it is not checked further.
		m.response = true
		if result.Exists() {
			m.Result = raw(result)
		}
		if errRes.Exists() {
			m.Error = &Error{Code: int(errRes.Get("code").Int()), Message: errRes.Get("message").Str}
			if d := errRes.Get("data"); d.Exists() {
				m.Error.Data = raw(d)
			}
		}
		return m, nil
	}
	if m.hasID && !validID {
		return m, NewError(CodeInvalidRequest, "Invalid Request: id must be a string or a number")
	}
	if verRes.Type != gjson.String || verRes.Str != "2.0" {
		return m, NewError(CodeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	if !m.hasMethod {
		if result.Exists() || errRes.Exists() {
			return m, NewError(CodeInvalidRequest, "Invalid Request: a response must carry the id of the request it answers")
		}
		return m, NewError(CodeInvalidRequest, `Invalid Request: "method" is missing`)
	}
	if methRes.Type != gjson.String {
		return m, NewError(CodeInvalidRequest, `Invalid Request: "method" must be a string`)
	}
	m.Method = methRes.Str
	if params.Exists() && params.Type != gjson.Null {
		if !params.IsObject() && !params.IsArray() {
			return m, NewError(CodeInvalidRequest, `Invalid Request: "params" must be an object`)
		}
		m.Params = raw(params) // "params": null is taken as absent
	}
	return m, nil
}

// raw copies v's text: the line b is the reader's buffer, reused for the next
// line, while a message may be answered later.
func raw(v gjson.Result) json.RawMessage { return json.RawMessage(v.Raw) }

// Refusal is the answer to a message Parse refused with e: with the message's
// id when it had a usable one, with a null id when it had an id of another type
// or could not be read as a request at all, and nil for a malformed
// notification, which is never answered.
func Refusal(m *Message, e *Error) []byte {
	switch {
	case m == nil || m.ID != nil:
		var id json.RawMessage
		if m != nil {
			id = m.ID
		}
		return EncodeError(id, e)
	case m.hasID || !m.hasMethod:
		return EncodeError(nil, e)
	}
	return nil
}

// envelope is every member a message may have, in the order they are written.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

var nullID = json.RawMessage("null")

// encode writes env without escaping HTML characters, so that an id is echoed
// as the client wrote it.
func encode(env envelope) ([]byte, error) {
	env.JSONRPC = "2.0"
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// marshal encodes v with encoding/json (HTML characters escaped); a
// json.RawMessage is taken as it is.
func marshal(v any) (json.RawMessage, error) {
	if r, ok := v.(json.RawMessage); ok {
		return r, nil
	}
	return json.Marshal(v)
}

// EncodeResult encodes a success response to the request with id. The result
// is encoded in the same pass as the envelope, by encoding/json without
// escaping HTML characters; a json.RawMessage is written as it is.
func EncodeResult(id json.RawMessage, result any) ([]byte, error) {
	if result == nil {
		result = nullID // "result" is required
	}
	return encode(envelope{ID: id, Result: result})
}

// EncodeError encodes an error response; a nil id is written as null. Data
// that cannot be encoded is left out.
func EncodeError(id json.RawMessage, e *Error) []byte {
	if id == nil {
		id = nullID
	}
	eb, err := json.Marshal(e)
	if err != nil {
		eb, _ = json.Marshal(&Error{Code: e.Code, Message: e.Message})
	}
	b, err := encode(envelope{ID: id, Error: eb})
	if err != nil { // only an id that is not JSON, which Parse never returns
		b, _ = encode(envelope{ID: nullID, Error: eb})
	}
	return b
}

// EncodeRequest encodes a request with id; nil params are left out.
func EncodeRequest(id json.RawMessage, method string, params any) ([]byte, error) {
	env := envelope{ID: id, Method: method}
	if params != nil {
		p, err := marshal(params)
		if err != nil {
			return nil, err
		}
		env.Params = p
	}
	return encode(env)
}

// EncodeNotification encodes a notification; nil params are left out.
func EncodeNotification(method string, params any) ([]byte, error) {
	return EncodeRequest(nil, method, params)
}

// EncodeBatch encodes encoded messages as one batch (a JSON array).
func EncodeBatch(msgs [][]byte) ([]byte, error) {
	raws := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		raws[i] = m
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(raws); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
