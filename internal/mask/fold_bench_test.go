package mask

import (
	"strings"
	"testing"
)

// BenchmarkViewNonASCII: the view of a French and a Russian paragraph, which fold nothing but
// must still be looked at rune by rune.
func BenchmarkViewNonASCII(b *testing.B) {
	s := strings.Repeat("Vous trouverez ci-joint la facture détaillée. Спасибо за ваш заказ! ", 50)
	b.SetBytes(int64(len(s)))
	for range b.N {
		newView(s)
	}
}
