//go:build linux

package projects

import (
	"os"
	"syscall"
	"time"
)

// sysKey adds the inode and the change time.
func sysKey(st os.FileInfo, k *fileKey) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		k.ino = sys.Ino
		k.changed = time.Unix(sys.Ctim.Sec, sys.Ctim.Nsec)
	}
}
