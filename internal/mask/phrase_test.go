package mask

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The tests of this file read text as the masks do: folded (foldString), then normalized for the
// phrase rules.
func normf(s string) string { return normalize(foldString(s)) }

// firstOf returns the first row of kind k in lang, or def.
func firstOf(lang string, k kind, def string) string {
	for _, p := range phrases() {
		if p.lang == lang && p.kind == k {
			return p.text
		}
	}
	return def
}

// join puts b after a with a space, or with none when a ends or b starts in a script written
// without spaces.
func join(a, b string) string {
	l, _ := utf8.DecodeLastRuneInString(a)
	f, _ := utf8.DecodeRuneInString(b)
	if isSpaceless(l) || isSpaceless(f) {
		return a + b
	}
	return a + " " + b
}

// TestPhrases checks every row of the table for what its kind says it does, in a sentence of
// its own.
func TestPhrases(t *testing.T) {
	rows := phrases()
	langs := map[string]bool{}
	for _, p := range rows {
		langs[p.lang] = true
	}
	for _, l := range []string{"en", "fr", "de", "es", "it", "pt", "nl", "pl", "cs", "sv", "da", "nb", "fi", "tr", "ru", "uk", "ja", "zh", "ko", "ar", "he"} {
		if !langs[l] {
			t.Errorf("no phrases in %s", l)
		}
	}
	codeOK := codeContext(normf("Your code: 48291376"))
	if !codeOK {
		t.Fatal(`"Your code: 48291376" is not a code message`)
	}
	for _, p := range rows {
		name := fmt.Sprintf("%s/%s/%s", p.lang, p.kind, p.text)
		t.Run(name, func(t *testing.T) {
			text := strings.TrimSuffix(p.text, "*")
			label := firstOf(p.lang, passwordLabel, "password")
			cw := firstOf(p.lang, codeWord, "code")
			sep := ": "
			if r, _ := utf8.DecodeLastRuneInString(cw); isSpaceless(r) {
				sep = "："
			}
			switch p.kind {
			case codePhrase:
				if in := "Hello.\n" + text + "\nThanks."; !codeContext(normf(in)) {
					t.Errorf("%q is not a code message", in)
				}
			case codeRemark:
				if in := "Hello.\n" + text + "\nThanks."; !codeContext(normf(in)) {
					t.Errorf("%q is not a code message", in)
				}
				if in := join(firstOf(p.lang, notCode, "order"), text); codeContext(normf(in)) {
					t.Errorf("%q is a code message", in)
				}
			case codeWord:
				if in := text + sep + "482913"; !codeContext(normf(in)) {
					t.Errorf("%q is not a code message", in)
				}
				if codeContext(normf(text)) {
					t.Errorf("%q alone is a code message", text)
				}
			case signInVerb:
				if in := text + ", use 482913"; !codeContext(normf(in)) {
					t.Errorf("%q is not a code message", in)
				}
				if in := text + ".\n\n482913\n"; !strings.Contains(text, "account") && !codeContext(normf(in)) {
					t.Errorf("%q is not a code message", in)
				}
				for _, in := range []string{text, text + " — order 48291376", text + " on 14/06/2025 at 10:30"} {
					if codeContext(normf(in)) {
						t.Errorf("%q is a code message", in)
					}
				}
			case notCode:
				for _, in := range []string{cw + sep + join(text, "48291376"), join(join(text, cw), "48291376")} {
					if codeContext(normf(in)) {
						t.Errorf("%q is a code message", in)
					}
				}
			case notCodeAfter:
				for _, in := range []string{cw + sep + join("48291376", text), join(join(cw, text), "48291376")} {
					if codeContext(normf(in)) {
						t.Errorf("%q is a code message", in)
					}
				}
			case presenter:
				if in := "To sign in, " + join(text, "48291376") + " please."; !codeContext(normf(in)) {
					t.Errorf("%q is not a code message", in)
				}
			case passwordLabel, keyLabel, pinLabel:
				want := map[kind]string{passwordLabel: ReasonPassword, keyLabel: ReasonKey, pinLabel: ReasonPIN}[p.kind]
				value := "Xk82!pq9"
				if p.kind == pinLabel {
					value = "4829"
				}
				for _, in := range []string{text + ": " + value, "Hello,\n" + text + "：" + value + "\nBye"} {
					if got := givesSecret(foldString(in)); got != want {
						t.Errorf("givesSecret(%q) = %q; want %q", in, got, want)
					}
				}
				if in := text + ": ********"; givesSecret(foldString(in)) != "" {
					t.Errorf("%q gives a secret", in)
				}
			case withheldWords:
				if in := "Hello,\n" + text + " attached."; !withheldPhrase(normf(in)) {
					t.Errorf("%q does not withhold", in)
				}
			case oneTimeBefore, oneTimeAfter:
				in := join(text, label) + ": 482913"
				if p.kind == oneTimeAfter {
					in = join(label, text) + ": 482913"
				}
				if got := givesSecret(foldString(in)); got != "" {
					t.Errorf("givesSecret(%q) = %q; want a one-time password", in, got)
				}
				if givesSecret(foldString(label+": 482913")) == "" {
					t.Errorf("%q gives no password", label+": 482913")
				}
			case connector:
				if in := join(join(label, text), "Xk82!pq9"); givesSecret(foldString(in)) == "" {
					t.Errorf("%q gives no password", in)
				}
				if in := join(join(label, text), "changed"); givesSecret(foldString(in)) != "" {
					t.Errorf("%q gives a password", in)
				}
			case labelFiller:
				if in := join(label, text) + ": Xk82!pq9"; givesSecret(foldString(in)) == "" {
					t.Errorf("%q gives no password", in)
				}
			case stopValue:
				for _, in := range []string{label + ": " + text, label + ": " + text + "\n"} {
					if got := givesSecret(foldString(in)); got != "" {
						t.Errorf("givesSecret(%q) = %q", in, got)
					}
				}
			case linkKey:
				in := "See https://example.com/" + text + "/x9 today"
				if out, _ := scan(in, false); !strings.Contains(out, HiddenLink) {
					t.Errorf("%q → %q", in, out)
				}
			case codePointer:
				if in := "Hello.\n" + text + "\nThanks."; codeContext(normf(in)) {
					t.Errorf("%q alone is a code message", in)
				}
				if in := "482913\n\n" + text + "."; !codeContext(normf(in)) {
					t.Errorf("%q is not a code message", in)
				}
				if in := "Hello.\n" + text + "\nThanks."; !messageCode(normf("[Example] 482913"), normf(in)) {
					t.Errorf("subject %q and text %q are not a code message", "[Example] 482913", in)
				}
				if in := "Hello.\n" + text + "\nThanks."; messageCode(normf("[Example] 14/06/2025 10:30"), normf(in)) {
					t.Errorf("subject of a date and text %q are a code message", in)
				}
			case recoveryLabel:
				if out, n := Own(text + ":\n4829-1376\n7103-9524\n\nmilk"); n != 2 || strings.Contains(out, "4829") || !strings.Contains(out, "milk") {
					t.Errorf("Own(%q list) = %q, %d", text, out, n)
				}
			default:
				t.Fatalf("kind %d has no test", p.kind)
			}
		})
	}
}

// TestPhraseScripts: a phrase of a language not written in Latin letters keeps, once folded, a
// letter that is not ASCII, so that it never matches Latin text by its look-alike letters alone.
func TestPhraseScripts(t *testing.T) {
	for _, p := range phrases() {
		switch p.lang {
		case "ru", "uk", "ja", "zh", "ko", "ar", "he", "th":
		default:
			continue
		}
		if p.kind == stopValue || p.kind == presenter || p.kind == notCodeAfter {
			if isASCII(normf(p.text)) && !isASCII(p.text) {
				t.Errorf("%s %s %q folds to ASCII %q", p.lang, p.kind, p.text, normf(p.text))
			}
			continue
		}
		if isASCII(normf(p.text)) && !isASCII(p.text) {
			t.Errorf("%s %s %q folds to ASCII %q", p.lang, p.kind, p.text, normf(p.text))
		}
	}
}

// TestNotBeforeMany: the not-a-code words kept as suffixes (several words, or of a script
// without spaces) end in a letter that is not ASCII, which negatedBefore relies on.
func TestNotBeforeMany(t *testing.T) {
	for _, it := range tbl().notBeforeMany {
		if r, _ := utf8.DecodeLastRuneInString(it.text); r < utf8.RuneSelf {
			t.Errorf("%q ends in ASCII", it.text)
		}
	}
}

// TestPhraseSets: the one-pass sets hold every phrase (at least two bytes), once.
func TestPhraseSets(t *testing.T) {
	for _, p := range phrases() {
		switch p.kind {
		case codePhrase, codeRemark, codeWord, signInVerb, withheldWords, codePointer:
			if n := normf(strings.TrimSuffix(p.text, "*")); len(n) < 2 {
				t.Errorf("%s %s %q is shorter than two bytes", p.lang, p.kind, p.text)
			}
		}
	}
	if got := len(table); got < 100 {
		t.Errorf("only %d groups", got)
	}
}

// TestScripts: phrases match across scripts as their writing needs.
func TestScripts(t *testing.T) {
	for _, in := range []string{
		"인증번호는 482913입니다", "验证码482913，请勿泄露", "您的OTP是482913", "認証コードは482913です",
		"رمز التحقق الخاص بك هو 482913", "رمزك 482913", "הקוד שלך: 482913", "קוד האימות: 482913",
		"Ваш код подтверждения: 482913", "Kod weryfikacyjny: 482913", "Doğrulama kodunuz: 482913",
	} {
		if !codeContext(normf(in)) {
			t.Errorf("%q is not a code message", in)
		}
	}
	for _, in := range []string{"מיקוד 4829105", "優惠碼 48291376", "クーポンコード：48291376", "Промокод 48291376"} {
		if codeContext(normf(in)) {
			t.Errorf("%q is a code message", in)
		}
	}
	for _, in := range []string{
		"وكلمة المرور: Xk82!pq9", "كلمة المرور الخاصة بك هي: Xk82!pq9", "הסיסמה שלך היא: Xk82!pq9",
		"您的密码是Xk82!pq9", "パスワードはXk82!pq9です", "비밀번호는 Xk82!pq9입니다", "Ваш пароль: Xk82!pq9",
		"ВАШ ПАРОЛЬ: Xk82!pq9", "ŞİFRENİZ: Xk82!pq9", "Hasło: Xk82!pq9", "Heslo je Xk82!pq9",
	} {
		if givesSecret(foldString(in)) == "" {
			t.Errorf("%q gives no password", in)
		}
	}
	for _, in := range []string{"ワンタイムパスワード：482913", "一次性密码：482913", "كلمة المرور لمرة واحدة: 482913", "비밀번호가 변경되었습니다", "密码：已重置"} {
		if got := givesSecret(foldString(in)); got != "" {
			t.Errorf("%q gives a password (%s)", in, got)
		}
	}
}

type match struct {
	start, end int
	text       string
	kind       kind
}

// allMatches is the plain definition phraseSet.each must agree with: every phrase, tried at
// every rune of n.
func allMatches(s *phraseSet, n string) []match {
	var out []match
	for _, items := range s.byPair {
		for x := range items {
			it := &items[x]
			for k := 0; k < len(n); k++ {
				if !utf8.RuneStart(n[k]) || !matchAt(n, k, it.text) || !it.startOK(n, k, startsWordAt(n, k)) {
					continue
				}
				if e := k + len(it.text); it.endOK(n, e) {
					out = append(out, match{k, e, it.text, it.kind})
				}
			}
		}
	}
	return sortMatches(out)
}

func sortMatches(m []match) []match {
	slices.SortFunc(m, func(a, b match) int {
		if a.start != b.start {
			return a.start - b.start
		}
		if a.end != b.end {
			return a.end - b.end
		}
		if a.kind != b.kind {
			return int(a.kind) - int(b.kind)
		}
		return strings.Compare(a.text, b.text)
	})
	return m
}

// FuzzPhraseSet: the one-pass phrase search finds exactly the phrases that looking for each
// phrase at each place finds.
func FuzzPhraseSet(f *testing.F) {
	for _, s := range []string{
		"Your verification code", "unverified", "xverify", "verify!", "2fa", "a2fa", "2fab",
		"reinitialisez", "préréinitialiser", "één-time", "one-time", "one-timer", "é one-time é",
		"votre code est 1234", "temporary password", "temporary passwords", "ötemporary password",
		"reset your password.", "verifizierungen", "\u00a0otp\u00a0", "mfa", "", "o", "ot",
		"인증번호는", "验证码482913", "برمز التحقق", "والرمز", "הקוד", "מיקוד", "код\nподтверждения",
		"rодs", "verification\ncode", "[code hidden] code",
	} {
		f.Add(s)
	}
	for _, p := range phrases() {
		f.Add("x " + p.text + " y")
	}
	t := tbl()
	f.Fuzz(func(tt *testing.T, s string) {
		n := normf(s)
		for _, set := range []*phraseSet{t.codes, t.withheld} {
			var got []match
			set.each(n, func(start, end int, it *phraseItem) bool {
				got = append(got, match{start, end, it.text, it.kind})
				return true
			})
			got = sortMatches(got)
			if want := allMatches(set, n); !slices.Equal(got, want) {
				tt.Fatalf("phrases in %q: one pass finds %v, each phrase %v", n, got, want)
			}
		}
	})
}
