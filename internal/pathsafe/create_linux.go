//go:build linux

package pathsafe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// create walks from base to dirs one openat(2) at a time, each with
// O_NOFOLLOW, so no link is followed even if one is swapped in meanwhile, then
// creates last (or "last (n).ext") with O_CREAT|O_EXCL|O_NOFOLLOW.
func create(base string, dirs []string, last string) (*os.File, string, error) {
	fd, err := retry(func() (int, error) {
		return syscall.Open(base, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, "", fmt.Errorf("pathsafe: cannot open the folder %s; check that it exists and is yours: %w", base, err)
	}
	dir := base
	for _, c := range dirs {
		dir = filepath.Join(dir, c)
		next, err := openDir(fd, c)
		if errors.Is(err, syscall.ENOENT) {
			if err := syscall.Mkdirat(fd, c, 0o700); err != nil && !errors.Is(err, syscall.EEXIST) {
				syscall.Close(fd)
				return nil, "", fmt.Errorf("pathsafe: cannot create the folder %s; check its parent's permissions: %w", dir, err)
			}
			next, err = openDir(fd, c)
		}
		syscall.Close(fd)
		if err != nil {
			return nil, "", chainError(dir, err)
		}
		fd = next
	}
	defer syscall.Close(fd)
	for i := 1; i <= maxTries; i++ {
		name := candidate(last, i)
		ffd, err := retry(func() (int, error) {
			return syscall.Openat(fd, name, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|
				syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		})
		if errors.Is(err, syscall.EEXIST) {
			continue // taken, perhaps by a link: try the next name
		}
		if err != nil {
			return nil, "", fmt.Errorf("pathsafe: cannot create %s; check the folder's permissions: %w", filepath.Join(dir, name), err)
		}
		final := filepath.Join(dir, name)
		f := os.NewFile(uintptr(ffd), final)
		if err := verify(f, final, dir); err != nil {
			f.Close()
			syscall.Unlinkat(fd, name) // the file we just made, wherever its folder now is
			return nil, "", err
		}
		return f, final, nil
	}
	return nil, "", fmt.Errorf("pathsafe: %d files named like %q already exist in %s; choose another name", maxTries, last, dir)
}

func openDir(fd int, name string) (int, error) {
	return retry(func() (int, error) {
		return syscall.Openat(fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	})
}

// retry repeats a call interrupted by a signal.
func retry(open func() (int, error)) (int, error) {
	for {
		fd, err := open()
		if !errors.Is(err, syscall.EINTR) {
			return fd, err
		}
	}
}

// chainError explains why a folder of the chain could not be opened.
func chainError(dir string, err error) error {
	if fi, lerr := os.Lstat(dir); lerr == nil {
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("pathsafe: %s is a symbolic link, which postern never follows; choose another name: %w", dir, err)
		case !fi.IsDir():
			return fmt.Errorf("pathsafe: %s is a file, not a folder; choose another name: %w", dir, err)
		}
	}
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("pathsafe: %s is a symbolic link or a file, not a folder; choose another name: %w", dir, err)
	}
	return fmt.Errorf("pathsafe: cannot open the folder %s; check its permissions: %w", dir, err)
}
