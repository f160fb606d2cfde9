//go:build !unix

package notes

const (
	syscallNoFollow = 0
	syscallNonBlock = 0
)
