//go:build unix

package fileedit

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives f the owner and group of like, when allowed: so that a file rewritten by root
// (sudo postern …) stays the person's. A refusal is ignored; the file is then ours.
func keepOwner(f *os.File, like fs.FileInfo) {
	if like == nil {
		return
	}
	if st, ok := like.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}
