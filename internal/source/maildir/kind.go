package maildir

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
)

// KindName is the kind of a Maildir import in the configuration.
const KindName = "maildir"

// noun names an account of the kind in a sentence.
const noun = "a Maildir import"

// Kind is the row of the table of kinds for Maildir imports.
var Kind = source.Kind{
	Name:     KindName,
	Noun:     noun,
	Caps:     source.Mail,
	Settings: Settings{},
	Parse:    parse,
	Open:     Open,
	Problems: problems,
	Where:    folder,
	Line:     folder,
	Flags: source.Flags{
		List:     []source.Flag{{Name: "maildir", Usage: "a local Maildir to import, read-only", Dir: true}},
		Synopsis: "--maildir PATH",
		Needs:    "--maildir PATH",
		Foreign:  foreign,
		Apply:    apply,
		Validate: validate,
	},
}

// Settings are the fields of the configuration's account that a Maildir import reads.
type Settings struct {
	Name string `toml:"name"`
	// Path is the Maildir (--maildir PATH).
	Path string `toml:"path"`
	// TrustedAuthServ names the receiving servers whose Authentication-Results are believed.
	TrustedAuthServ []string `toml:"trusted_authserv_ids"`
}

// SettingsOf is the settings of a configured account; a field of another kind is ignored
// (config.Notices says so).
func SettingsOf(a config.Account) (Settings, error) {
	var s Settings
	err := source.Settle(a, noun, &s)
	return s, err
}

// parse is SettingsOf without its result: the Parse of Kind.
func parse(a config.Account) error {
	_, err := SettingsOf(a)
	return err
}

func folder(a config.Account) string { return a.Path }

// foreign refuses --maildir for an account of another kind.
func foreign(flag, account, noun string) error {
	return fmt.Errorf("account %s is %s; --%s cannot change its kind (remove it and add it again)", account, noun, flag)
}

// isMaildir says whether dir holds a cur folder.
func isMaildir(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "cur"))
	return err == nil && fi.IsDir()
}

// problems lists what would make an import of a fail.
func problems(a config.Account) []string {
	set := "postern account set " + a.Name
	if a.Path == "" {
		return []string{fmt.Sprintf("no path; set one with %s --maildir PATH", set)}
	}
	if !isMaildir(a.Path) {
		return []string{fmt.Sprintf("%s is not a Maildir (it has no cur folder); set the folder that holds cur, new and tmp with %s --maildir PATH", a.Path, set)}
	}
	return nil
}

// apply sets the path, made absolute, when --maildir is given.
func apply(fl source.FlagValues, a *config.Account) error {
	if !fl.Changed("maildir") {
		return nil
	}
	dir, _ := fl.GetString("maildir")
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	a.Path = abs
	return nil
}

// validate says whether the path given to --maildir is a Maildir.
func validate(a config.Account) error {
	if !isMaildir(a.Path) {
		return fmt.Errorf("%s is not a Maildir (it has no cur folder); give the folder that holds cur, new and tmp", a.Path)
	}
	return nil
}
