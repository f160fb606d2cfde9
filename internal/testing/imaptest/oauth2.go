package imaptest

import (
	"os"
	"path/filepath"
)

// oauth2Conf is the Dovecot settings for Options.OAuth2IntrospectionURL: the SASL mechanisms
// XOAUTH2 and OAUTHBEARER, and an oauth2 passdb (Dovecot 2.3) that asks the URL, by an RFC
// 7662 POST, whether a token is active and whose it is. The passdb's own settings are a file
// in dir, as Dovecot wants them.
func (o Options) oauth2Conf(dir string) (string, error) {
	if o.OAuth2IntrospectionURL == "" {
		return "", nil
	}
	ext := filepath.Join(dir, "dovecot-oauth2.conf.ext")
	settings := "introspection_mode = post\n" +
		"introspection_url = " + o.OAuth2IntrospectionURL + "\n" +
		"force_introspection = yes\n" +
		"username_attribute = username\n" +
		"active_attribute = active\n" +
		"active_value = true\n"
	if err := os.WriteFile(ext, []byte(settings), 0o644); err != nil {
		return "", err
	}
	return "auth_mechanisms = plain login xoauth2 oauthbearer\n" +
		"passdb {\n  driver = oauth2\n  mechanisms = xoauth2 oauthbearer\n  args = " + ext + "\n}\n", nil
}
