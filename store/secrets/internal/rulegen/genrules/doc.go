// Command genrules writes store/secrets/gitleaks_rules.go (see package
// rulegen). `go generate ./store/secrets` runs it; run it again after
// upgrading github.com/zricethezav/gitleaks/v8, and a test fails until
// then.
package main
