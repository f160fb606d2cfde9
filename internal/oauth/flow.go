package oauth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"time"

	"golang.org/x/oauth2"

	"github.com/postern-mcp/postern/internal/config"
)

// FlowOptions are what an authorization code flow needs beyond the account's OAuth2 fields.
type FlowOptions struct {
	// ClientSecret is the OAuth2 client's secret, for providers that give one ("": none).
	ClientSecret string
	// Open opens the authorisation page in the person's browser besides printing it.
	Open bool
	// Out is where the page's address and the progress are said.
	Out io.Writer
	// Wait is how long the person has to approve (default 5 minutes).
	Wait time.Duration
}

// Authorize runs the authorization code flow with PKCE (RFC 7636) for a: it listens on
// 127.0.0.1 on a port of the system's choosing, prints the address of the provider's
// authorisation page (and opens it when asked), waits for the provider to send the browser
// back to http://127.0.0.1:PORT/callback with a code and the state it was given, and trades
// the code for tokens. Nothing listens on another address, and any other state is refused.
func Authorize(ctx context.Context, a config.Account, o FlowOptions) (Saved, error) {
	if a.OAuth2ClientID == "" || a.OAuth2AuthURL == "" || a.OAuth2TokenURL == "" {
		return Saved{}, fmt.Errorf("account %s needs --oauth2-client-id, --oauth2-auth-url and --oauth2-token-url (the provider's client id and endpoints) to be authorised", a.Name)
	}
	if o.Wait == 0 {
		o.Wait = 5 * time.Minute
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Saved{}, fmt.Errorf("cannot listen on 127.0.0.1 for the provider's answer (%v); try again", err)
	}
	defer ln.Close()
	conf := Config(a, o.ClientSecret)
	conf.RedirectURL = fmt.Sprintf("http://%s/callback", ln.Addr().String())
	state := randomString()
	verifier := oauth2.GenerateVerifier()
	authURL := conf.AuthCodeURL(state, oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier))

	type answer struct {
		code string
		err  error
	}
	got := make(chan answer, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var ans answer
		switch {
		case q.Get("state") != state:
			http.Error(w, "This answer does not belong to the authorisation postern started; start again with postern account oauth.", http.StatusBadRequest)
			return // a stray or forged request: keep waiting for the real one
		case q.Get("error") != "":
			ans.err = fmt.Errorf("the provider refused the authorisation of account %s (%s); run %s again and approve it", a.Name, q.Get("error"), Reauthorize(a.Name))
		case q.Get("code") == "":
			ans.err = fmt.Errorf("the provider sent no authorisation code for account %s; run %s again", a.Name, Reauthorize(a.Name))
		default:
			ans.code = q.Get("code")
		}
		msg := "postern has the authorisation of account " + a.Name + ". You can close this page."
		if ans.err != nil {
			msg = ans.err.Error()
		}
		fmt.Fprintf(w, "<!doctype html><title>postern</title><p>%s</p>\n", html.EscapeString(msg))
		select {
		case got <- ans:
		default:
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	fmt.Fprintf(o.Out, "Open this address in your browser and approve postern's access to account %s:\n\n  %s\n\nWaiting up to %v for the answer at %s …\n", a.Name, authURL, o.Wait, conf.RedirectURL)
	if o.Open {
		if err := openBrowser(authURL); err != nil {
			fmt.Fprintf(o.Out, "Could not open a browser (%v); open the address yourself.\n", err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, o.Wait)
	defer cancel()
	var ans answer
	select {
	case ans = <-got:
	case <-wctx.Done():
		if errors.Is(wctx.Err(), context.DeadlineExceeded) {
			return Saved{}, fmt.Errorf("no answer came from the provider within %v; run %s again and approve in the browser", o.Wait, Reauthorize(a.Name))
		}
		return Saved{}, wctx.Err()
	}
	if ans.err != nil {
		return Saved{}, ans.err
	}
	xctx, xcancel := context.WithTimeout(ctx, time.Minute)
	defer xcancel()
	tok, err := conf.Exchange(xctx, ans.code, oauth2.VerifierOption(verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return Saved{}, fmt.Errorf("the provider refused to trade the authorisation code of account %s for tokens (%s); check --oauth2-client-id (and the client secret), then run %s again", a.Name, re.ErrorCode, Reauthorize(a.Name))
		}
		return Saved{}, fmt.Errorf("cannot reach the token endpoint of account %s (%s); check the network and run %s again", a.Name, oneLine(err), Reauthorize(a.Name))
	}
	if tok.RefreshToken == "" {
		return Saved{}, fmt.Errorf("the provider gave account %s no refresh token, so postern could not renew its access; check the scopes (some providers need offline_access) and run %s again", a.Name, Reauthorize(a.Name))
	}
	return Saved{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, Expiry: tok.Expiry, ClientSecret: o.ClientSecret}, nil
}

func randomString() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// openBrowser opens url in the person's browser, the system's way.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	return cmd.Start()
}
