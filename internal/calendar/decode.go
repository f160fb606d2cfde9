package calendar

import (
	"bytes"
	"fmt"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-vcard"
)

// Decode reads an iCalendar text. go-ical panics on some malformed lines a server accepts (a
// quoted parameter value followed by anything but a comma, a semicolon or a colon:
// SUMMARY;X="a"b:…), and the text is a stranger's: such a panic is an error here, so that one
// invitation cannot stop a sync or a tool.
func Decode(data []byte) (cal *ical.Calendar, err error) {
	defer func() {
		if p := recover(); p != nil {
			cal, err = nil, fmt.Errorf("%v", p)
		}
	}()
	return ical.NewDecoder(bytes.NewReader(data)).Decode()
}

// DecodeCard reads one vCard, a panic of go-vcard being an error as in Decode.
func DecodeCard(data []byte) (card vcard.Card, err error) {
	defer func() {
		if p := recover(); p != nil {
			card, err = nil, fmt.Errorf("%v", p)
		}
	}()
	return vcard.NewDecoder(bytes.NewReader(data)).Decode()
}
