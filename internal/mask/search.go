package mask

// Fold is s as the masks read it (fold.go): compatibility forms, every decimal digit as its
// ASCII digit, look-alike letters as Latin ones, invisible characters gone. A search that
// folds both its query and the text it looks in finds "４８２" where "482" is written and the
// reverse, so a digit's form never tells a search more than the masked text shows.
func Fold(s string) string { return foldString(s) }
