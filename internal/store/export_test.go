package store

// SetRemaskBatch sets how many messages RemaskMail takes per transaction, and returns what
// puts it back.
func SetRemaskBatch(n int) func() {
	old := remaskBatch
	remaskBatch = n
	return func() { remaskBatch = old }
}
