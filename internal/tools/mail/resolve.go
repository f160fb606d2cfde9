package mail

import (
	"context"
	"errors"
	"strings"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// An account an agent names is found among the accounts this connection may
// see, by its exact name or, failing that, without regard to case; a name
// that fits none is an error naming the nearest (search.Nearest) or, when
// none is near, every visible account. The error never repeats the name
// given and never looks at hidden accounts, so that a hidden account and one
// that does not exist get the same answer. Folder names are found by the
// store (store.FolderError), among the accounts found here.

// SearchAccounts is visibleNames for a tool that reads mail: an error when
// there is no account to read.
func (s *Mail) SearchAccounts(ctx context.Context) ([]string, error) {
	names, err := s.VisibleNames(ctx)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, s.noAccount()
	}
	return names, nil
}

// noAccount says why this connection sees no account, and what to do.
func (s *Mail) noAccount() error {
	if cfg, err := s.Config.Get(); err == nil && len(cfg.Accounts) > 0 {
		return errors.New("this connection may see none of the configured accounts (postern mcp --account names none of them); the person restarts it with a configured account")
	}
	return errors.New("no account is configured; the person adds one with postern account add NAME --imap HOST:993 --user USER --password-cmd CMD (or --maildir PATH), then runs postern sync")
}

// FindAccount returns the visible account called name. what says where the
// name was written, for the error ("" for the account argument).
func FindAccount(name string, visible []string, what string) (string, error) {
	var folded []string
	for _, n := range visible {
		if n == name {
			return n, nil
		}
		if strings.EqualFold(n, name) {
			folded = append(folded, n)
		}
	}
	if len(folded) == 1 {
		return folded[0], nil
	}
	if len(folded) > 1 {
		return "", errors.New("the account name" + what + " fits several accounts that differ only by case (" + strings.Join(folded, ", ") + "); write it exactly as one of them")
	}
	msg := "there is no such account here" + what
	if near := search.Nearest(name, visible); len(near) > 0 {
		return "", errors.New(msg + "; the nearest: " + strings.Join(near, ", "))
	}
	listed := visible[:min(len(visible), kit.MaxListed)]
	more := ""
	if len(visible) > kit.MaxListed {
		more = ", …"
	}
	return "", errors.New(msg + "; the accounts you can use: " + strings.Join(listed, ", ") + more + " (the " + generated.ToolStatus + " tool lists them)")
}

// ResolveQueryAccounts replaces each account: of q, in every group too, by
// the visible account it names.
func ResolveQueryAccounts(q *search.Query, visible []string) error {
	var err error
	q.Walk(func(c *search.Query) {
		for i, name := range c.Accounts {
			if err != nil {
				return
			}
			c.Accounts[i], err = FindAccount(name, visible, " (account: of the search)")
		}
	})
	return err
}
