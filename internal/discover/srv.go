package discover

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
)

// srvService is one RFC 6186 (and RFC 8314) service label and the TLS it means.
type srvService struct{ label, tls string }

// IMAP and submission services, in the order RFC 8314 prefers: implicit TLS first.
var (
	imapServices   = []srvService{{"_imaps._tcp.", "implicit"}, {"_imap._tcp.", "starttls"}}
	submitServices = []srvService{{"_submissions._tcp.", "implicit"}, {"_submission._tcp.", "starttls"}}
)

func lookupSRV(ctx context.Context, email, domain string, opt Options) (*Found, []Attempt) {
	r := opt.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	var tried []Attempt
	find := func(services []srvService) *Server {
		for _, s := range services {
			name := s.label + domain
			srv, err := querySRV(ctx, r, name, opt)
			if err != nil {
				tried = append(tried, Attempt{"the SRV record " + name, err.Error()})
				continue
			}
			tried = append(tried, Attempt{"the SRV record " + name, fmt.Sprintf("found %s:%d", srv.Host, srv.Port)})
			srv.TLS, srv.User = s.tls, email
			return srv
		}
		return nil
	}
	imap := find(imapServices)
	if imap == nil {
		return nil, tried
	}
	return &Found{Source: "the SRV records of " + domain, IMAP: imap, SMTP: find(submitServices)}, tried
}

// querySRV is the first target of the SRV record name (_service._tcp.domain); a target of "."
// says the service is not offered (RFC 2782).
func querySRV(ctx context.Context, r *net.Resolver, name string, opt Options) (*Server, error) {
	ctx, cancel := context.WithTimeout(ctx, opt.timeout())
	defer cancel()
	_, addrs, err := r.LookupSRV(ctx, "", "", name)
	if err != nil {
		var de *net.DNSError
		switch {
		case errors.As(err, &de) && de.IsNotFound:
			return nil, errors.New("no record")
		case errors.As(err, &de) && de.IsTimeout, errors.Is(err, context.DeadlineExceeded):
			return nil, fmt.Errorf("no answer within %s", opt.timeout())
		case errors.As(err, &de):
			return nil, errors.New(de.Err)
		}
		return nil, err
	}
	for _, a := range addrs {
		host := strings.TrimSuffix(a.Target, ".")
		if host == "" {
			return nil, errors.New("the domain says it offers no such service")
		}
		if !validHost(host) || a.Port == 0 {
			continue
		}
		return &Server{Host: host, Port: int(a.Port)}, nil
	}
	return nil, errors.New("no record")
}
