package mailparse

import (
	"fmt"
	"strings"
	"testing"
)

// newsletter is HTML shaped like a marketing mail after a CSS inliner: nested tables, a style on
// every element, a hidden preheader.
func newsletter(stories int) string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>News</title><style>.x{color:red} @media (max-width:600px){.m{display:block!important}}</style></head><body style="margin:0;padding:0;background-color:#f4f4f4">`)
	b.WriteString(`<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">Preheader text here</div>`)
	b.WriteString(`<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" bgcolor="#f4f4f4"><tr><td align="center">`)
	for i := 0; i < stories; i++ {
		fmt.Fprintf(&b, `<table role="presentation" width="600" cellpadding="0" cellspacing="0" border="0" style="background-color:#ffffff;border-collapse:collapse;mso-table-lspace:0pt"><tr><td align="left" style="padding:20px 30px;font-family:Arial,Helvetica,sans-serif;font-size:16px;line-height:24px;color:#333333"><h2 style="margin:0 0 10px;font-size:20px;color:#111111">Story %d</h2><p style="margin:0">Lorem ipsum dolor sit amet, <a href="https://example.com/x?id=%d&amp;utm=1" style="color:#0066cc;text-decoration:underline">consectetur</a> adipiscing elit, sed do <b>eiusmod</b> tempor incididunt ut labore et dolore magna aliqua.</p><div style="font-size:0;line-height:0"><span style="display:inline-block;font-size:14px;color:#ffffff;background:#0066cc;padding:8px">Read more</span>&nbsp;</div><img src="https://example.com/i.png" alt="image %d" width="100" style="display:block;border:0"></td></tr></table>`+"\n", i, i, i)
	}
	b.WriteString(`</td></tr></table></body></html>`)
	return b.String()
}

// letter is HTML as a mail client writes a person's message: paragraphs, a link, a quote.
func letter(paragraphs int) string {
	var b strings.Builder
	b.WriteString(`<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8"></head><body><div dir="ltr">`)
	for i := 0; i < paragraphs; i++ {
		fmt.Fprintf(&b, "<div>Hi Sam, about paragraph %d: the <b>report</b> is ready, see <a href=\"https://example.com/r/%d\">the draft</a> and tell me what you think.</div><div><br></div>\n", i, i)
	}
	b.WriteString(`<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex">On Monday Sam wrote:<br>Earlier text.</blockquote></div></body></html>`)
	return b.String()
}

func BenchmarkHTMLToText(b *testing.B) {
	for _, c := range []struct {
		name, html string
	}{{"newsletter", newsletter(100)}, {"letter", letter(400)}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.html)))
			b.ReportAllocs()
			for b.Loop() {
				htmlToText(c.html)
			}
		})
	}
}
