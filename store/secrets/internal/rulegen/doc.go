// Package rulegen writes gitleaks_rules.go of store/secrets: gitleaks'
// default rule set, read from the gitleaks module ledger requires, as
// plain Go data of store/secrets' own types. Linking gitleaks' config
// package (viper, hcl, afero, yaml, zerolog, ...) into the ledger binary
// would cost every start of it; only the generator (genrules, run by go
// generate) and the tests import this package.
package rulegen
