// Package rulegen writes gitleaks_rules.go of store/secrets: gitleaks'
// default rule set, read from the gitleaks module ledger requires, as
// plain Go data of store/secrets' own types. Linking gitleaks' config
// package (viper, hcl, afero, yaml, zerolog, ...) into the ledger binary
// would cost every start of it; only the generator (genrules, run by go
// generate) and the tests import this package.
//
// It is a module of its own (go.mod here), with the tests that compare
// ledger's secret engine with gitleaks' detector, so that ledger's module
// requires neither gitleaks nor what gitleaks brings. From the
// repository's top folder:
//
//	go generate ./store/secrets                                       # rewrite gitleaks_rules.go
//	(cd store/secrets/internal/rulegen && go test -tags ledger_gitleaks ./...)  # compare with gitleaks
package rulegen
