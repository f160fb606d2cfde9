//go:build unix

package notes

import "syscall"

// A note's file is opened without following a link (os.Root already refuses one that leaves
// the folder) and without waiting on a FIFO swapped in after the walk looked.
const (
	syscallNoFollow = syscall.O_NOFOLLOW
	syscallNonBlock = syscall.O_NONBLOCK
)
