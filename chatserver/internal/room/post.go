package room

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// The source article's two forms of a post, read here and checked by
// NickProblem and TextProblem: its send route GET /msg/<from>/<to>%20<text>
// and the JSON body of POST /send.

// msgShape is the form of the article's send route, shown in its refusals.
const msgShape = "expected /msg/<from>/<to>%20<text>, e.g. /msg/mary/john%20hello"

// ParseMsgPath reads the post of the article's send route from the escaped
// path /msg/<from>/<to>%20<text>, or says why it is not one.
func ParseMsgPath(escaped string) (from, to, text string, err error) {
	rest, ok := strings.CutPrefix(escaped, "/msg/")
	if !ok {
		return "", "", "", errors.New("bad send: " + msgShape)
	}
	rawFrom, rawRest, ok := strings.Cut(rest, "/")
	if !ok {
		return "", "", "", errors.New("bad send: " + msgShape)
	}
	from, err1 := url.PathUnescape(rawFrom)
	target, err2 := url.PathUnescape(rawRest)
	if errors.Join(err1, err2) != nil {
		return "", "", "", errors.New("bad send: the path is not valid %-encoding: " + msgShape)
	}
	to, text, ok = strings.Cut(target, " ")
	if !ok {
		return "", "", "", errors.New("bad send: no space between the receiver and the text: " + msgShape)
	}
	return from, to, text, nil
}

// DecodeSend reads the body of POST /send: one JSON object
// {"from","to","text"} and nothing else; an error of body's reader is
// wrapped.
func DecodeSend(body io.Reader) (from, to, text string, err error) {
	var in struct {
		From string `json:"from"`
		To   string `json:"to"`
		Text string `json:"text"`
	}
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return "", "", "", fmt.Errorf(`body is not the JSON {"from":"<nick>","to":"<nick> or all","text":"<message>"}: %w`, err)
	}
	if dec.More() {
		return "", "", "", errors.New(`body has more after the JSON {"from":"<nick>","to":"<nick> or all","text":"<message>"}: send one object`)
	}
	return in.From, in.To, in.Text, nil
}
