package projects

import (
	"os"
	"sync"
	"time"
)

// Watcher reads the projects file again whenever it changed, looking at every call: a
// project the person closes is closed from the next call, with no delay to wait out.
type Watcher struct {
	path string

	mu     sync.Mutex
	loaded bool
	key    fileKey
	set    *Set
	err    error
}

// fileKey is what tells a changed file: a rename over it (what postern writes) changes the
// inode, an edit in place the size, the modification or the change time.
type fileKey struct {
	exists       bool
	size         int64
	mod, changed time.Time
	ino          uint64
}

// NewWatcher watches the projects file at path.
func NewWatcher(path string) *Watcher { return &Watcher{path: path} }

// Path is the watched file.
func (w *Watcher) Path() string { return w.path }

// Get returns the projects as the file says now. An error means nothing may be shown.
func (w *Watcher) Get() (*Set, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := statKey(w.path)
	if w.loaded && k == w.key {
		return w.set, w.err
	}
	w.set, w.err = Load(w.path)
	w.key, w.loaded = k, true
	return w.set, w.err
}

func statKey(path string) fileKey {
	st, err := os.Stat(path)
	if err != nil {
		return fileKey{}
	}
	k := fileKey{exists: true, size: st.Size(), mod: st.ModTime()}
	sysKey(st, &k)
	return k
}
