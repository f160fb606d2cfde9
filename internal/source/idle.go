package source

import "errors"

// ErrNoIdle is what a source's Idle (internal/watch) returns when its server cannot say
// when new mail comes: the account is then only polled.
var ErrNoIdle = errors.New("the server offers no IDLE")
