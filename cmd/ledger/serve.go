package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/web"
)

type serveOptions struct {
	Addr        string
	Open        bool
	AllowRemote bool
}

func newServeCmd(app *App) *cobra.Command {
	opts := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "A local web view of sessions, context use, compactions and what each lost",
		Long: `Serve a web view of the ledger: sessions, each session's context per message
against its window with a marker at every compaction and handoff, each
compaction's loss report beside its summary, search and audit. It only reads:
the database is opened read-only. Everything is in the binary: it makes no
request of its own and works offline.

It listens on 127.0.0.1:7788 and answers only requests addressed to this
machine's loopback. A non-loopback --addr needs --allow-remote: there is no
authentication, and anyone who can reach the address reads every transcript.`,
		Example: `  ledger serve
  ledger serve --open
  ledger serve --addr 127.0.0.1:9000`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), app, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Addr, "addr", "127.0.0.1:7788", "listen on `host:port`")
	f.BoolVar(&opts.Open, "open", false, "open the view in the default browser")
	f.BoolVar(&opts.AllowRemote, "allow-remote", false, "allow an --addr that is not loopback (no authentication: anyone who reaches it reads the ledger)")
	return cmd
}

func runServe(ctx context.Context, app *App, opts *serveOptions) error {
	loopback, err := loopbackAddr(opts.Addr)
	if err != nil {
		return err
	}
	if !loopback && !opts.AllowRemote {
		return usagef("--addr %s is not a loopback address: anyone who can reach it could read every transcript; "+
			"add --allow-remote to serve it anyway", opts.Addr)
	}
	path, err := app.DBPath()
	if err != nil {
		return err
	}
	srv, err := web.New(ctx, app.Engine(), web.Options{AllowRemote: opts.AllowRemote})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + "/"
	if !loopback {
		fmt.Fprintf(app.Stderr, "ledger: warning: serving %s beyond this machine, with no authentication: anyone who can reach %s reads every transcript in it\n",
			path, ln.Addr())
	}
	fmt.Fprintf(app.Stdout, "ledger: serving %s (read-only) at %s; Ctrl-C to stop\n", path, url)
	if opts.Open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(app.Stderr, "ledger: could not open a browser (%v): open %s yourself\n", err, url)
		}
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := hs.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return nil
	}
}

// loopbackAddr tells whether host:port listens on loopback only: a
// loopback IP or localhost; an empty host is every interface.
func loopbackAddr(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, usagef("--addr %q: want host:port, e.g. 127.0.0.1:7788", addr)
	}
	if strings.EqualFold(host, "localhost") {
		return true, nil
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback(), nil
}

// openBrowser asks the desktop to open url, without waiting for it.
func openBrowser(url string) error {
	name, args := "xdg-open", []string{url}
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler", url}
	}
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
