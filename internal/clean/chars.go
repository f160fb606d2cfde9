package clean

import "unicode"

// action is what filter does with a character on its own.
type action uint8

const (
	keep   action = iota // shown as is
	drop                 // removed
	brk                  // a line break or a tab: a space in Line, LF or TAB in Text
	decide               // kept or removed by context, looking at its neighbours
)

const (
	zwnj      = 0x200C
	zwj       = 0x200D
	vs15      = 0xFE0E
	vs16      = 0xFE0F
	blackFlag = 0x1F3F4
	tagBase   = 0xE0000
	tagEnd    = 0xE007F
	mongolian = 0 // index of Mongolian in joiningScripts
)

func classify(r rune) action {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' ||
		r == 0x85 || r == 0x2028 || r == 0x2029:
		return brk
	case r < 0x20 || (r >= 0x7F && r <= 0x9F):
		return drop
	case r == zwnj || r == zwj || r == vs15 || r == vs16 || isMongolianFVS(r) || isTag(r):
		return decide
	case unicode.Is(invisible, r):
		return drop
	case unicode.Is(unicode.Cf, r) && !unicode.Is(visibleFormat, r):
		return drop
	case unicode.Is(unicode.Noncharacter_Code_Point, r):
		return drop
	}
	return keep
}

// Forbidden reports whether r never survives Line or Text on its own: true
// for every character the package removes whatever its neighbours, and for
// the characters it keeps only in context (joiners, variation selectors, tags).
// Tests and callers that check a name (pathsafe) use it.
func Forbidden(r rune) bool {
	return classify(r) == drop || classify(r) == decide
}

func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

func isMongolianFVS(r rune) bool { return (r >= 0x180B && r <= 0x180D) || r == 0x180F }

// invisible is Unicode's Default_Ignorable_Code_Point (Unicode 15) less the
// characters decided by context, plus the interlinear annotation controls.
var invisible = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x00AD, 0x00AD, 1},
		{0x034F, 0x034F, 1},
		{0x061C, 0x061C, 1},
		{0x115F, 0x1160, 1},
		{0x17B4, 0x17B5, 1},
		{0x180E, 0x180E, 1},
		{0x200B, 0x200B, 1},
		{0x200E, 0x200F, 1},
		{0x202A, 0x202E, 1},
		{0x2060, 0x206F, 1},
		{0x3164, 0x3164, 1},
		{0xFE00, 0xFE0D, 1},
		{0xFEFF, 0xFEFF, 1},
		{0xFFA0, 0xFFA0, 1},
		{0xFFF0, 0xFFFB, 1},
	},
	R32: []unicode.Range32{
		{0x1BCA0, 0x1BCA3, 1},
		{0x1D173, 0x1D17A, 1},
		{0xE0080, 0xE0FFF, 1},
	},
}

// visibleFormat are format characters (Cf) that draw a glyph.
var visibleFormat = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x0600, 0x0605, 1},
		{0x06DD, 0x06DD, 1},
		{0x070F, 0x070F, 1},
		{0x0890, 0x0891, 1},
		{0x08E2, 0x08E2, 1},
	},
	R32: []unicode.Range32{
		{0x110BD, 0x110BD, 1},
		{0x110CD, 0x110CD, 1},
	},
}

// joiningScripts are the scripts where ZWJ and ZWNJ change how letters join
// or form conjuncts; there the joiners are visible and kept.
var joiningScripts = []*unicode.RangeTable{
	unicode.Mongolian, // index 0: see const mongolian
	unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mandaic,
	unicode.Manichaean, unicode.Psalter_Pahlavi, unicode.Hanifi_Rohingya,
	unicode.Adlam, unicode.Phags_Pa, unicode.Sogdian,
	unicode.Devanagari, unicode.Bengali, unicode.Gurmukhi, unicode.Gujarati,
	unicode.Oriya, unicode.Tamil, unicode.Telugu, unicode.Kannada,
	unicode.Malayalam, unicode.Sinhala, unicode.Tibetan, unicode.Khmer,
	unicode.Myanmar, unicode.Balinese, unicode.Javanese, unicode.Sundanese,
	unicode.Tai_Tham,
}

// joiningScript returns the index of r's script in joiningScripts, or -1.
func joiningScript(r rune) int {
	for i, t := range joiningScripts {
		if unicode.Is(t, r) {
			return i
		}
	}
	return -1
}

// isExtPict reports Unicode's Extended_Pictographic property (emoji-data.txt,
// Unicode 15, including the ranges reserved for future pictographs).
func isExtPict(r rune) bool {
	return r >= 0 && unicode.Is(extPict, r)
}

var extPict = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x00A9, 0x00A9, 1}, {0x00AE, 0x00AE, 1}, {0x203C, 0x203C, 1},
		{0x2049, 0x2049, 1}, {0x2122, 0x2122, 1}, {0x2139, 0x2139, 1},
		{0x2194, 0x2199, 1}, {0x21A9, 0x21AA, 1}, {0x231A, 0x231B, 1},
		{0x2328, 0x2328, 1}, {0x2388, 0x2388, 1}, {0x23CF, 0x23CF, 1},
		{0x23E9, 0x23F3, 1}, {0x23F8, 0x23FA, 1}, {0x24C2, 0x24C2, 1},
		{0x25AA, 0x25AB, 1}, {0x25B6, 0x25B6, 1}, {0x25C0, 0x25C0, 1},
		{0x25FB, 0x25FE, 1}, {0x2600, 0x2605, 1}, {0x2607, 0x2612, 1},
		{0x2614, 0x2685, 1}, {0x2690, 0x2705, 1}, {0x2708, 0x2712, 1},
		{0x2714, 0x2714, 1}, {0x2716, 0x2716, 1}, {0x271D, 0x271D, 1},
		{0x2721, 0x2721, 1}, {0x2728, 0x2728, 1}, {0x2733, 0x2734, 1},
		{0x2744, 0x2744, 1}, {0x2747, 0x2747, 1}, {0x274C, 0x274C, 1},
		{0x274E, 0x274E, 1}, {0x2753, 0x2755, 1}, {0x2757, 0x2757, 1},
		{0x2763, 0x2767, 1}, {0x2795, 0x2797, 1}, {0x27A1, 0x27A1, 1},
		{0x27B0, 0x27B0, 1}, {0x27BF, 0x27BF, 1}, {0x2934, 0x2935, 1},
		{0x2B05, 0x2B07, 1}, {0x2B1B, 0x2B1C, 1}, {0x2B50, 0x2B50, 1},
		{0x2B55, 0x2B55, 1}, {0x3030, 0x3030, 1}, {0x303D, 0x303D, 1},
		{0x3297, 0x3297, 1}, {0x3299, 0x3299, 1},
	},
	R32: []unicode.Range32{
		{0x1F000, 0x1F0FF, 1}, {0x1F10D, 0x1F10F, 1}, {0x1F12F, 0x1F12F, 1},
		{0x1F16C, 0x1F171, 1}, {0x1F17E, 0x1F17F, 1}, {0x1F18E, 0x1F18E, 1},
		{0x1F191, 0x1F19A, 1}, {0x1F1AD, 0x1F1E5, 1}, {0x1F201, 0x1F20F, 1},
		{0x1F21A, 0x1F21A, 1}, {0x1F22F, 0x1F22F, 1}, {0x1F232, 0x1F23A, 1},
		{0x1F23C, 0x1F23F, 1}, {0x1F249, 0x1F3FA, 1}, {0x1F400, 0x1F53D, 1},
		{0x1F546, 0x1F64F, 1}, {0x1F680, 0x1F6FF, 1}, {0x1F774, 0x1F77F, 1},
		{0x1F7D5, 0x1F7FF, 1}, {0x1F80C, 0x1F80F, 1}, {0x1F848, 0x1F84F, 1},
		{0x1F85A, 0x1F85F, 1}, {0x1F888, 0x1F88F, 1}, {0x1F8AE, 0x1F8FF, 1},
		{0x1F90C, 0x1F93A, 1}, {0x1F93C, 0x1F945, 1}, {0x1F947, 0x1FAFF, 1},
		{0x1FC00, 0x1FFFD, 1},
	},
}
