package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/agentledger/ledger/store/secrets/internal/rulegen"
)

func main() {
	out := flag.String("o", "gitleaks_rules.go", "the file to write")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "genrules:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	mod, err := rulegen.Module()
	if err != nil {
		return err
	}
	src, err := rulegen.Source(mod)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}
