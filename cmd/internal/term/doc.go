// Package term is what ledger writes to a terminal: a Writer that shows the
// control characters of recorded text escaped, and the one sequence of
// ledger's own (search's highlight). It is a package of its own, with no
// dependency on the rest of ledger, so that its fuzz target runs without
// building the command.
package term
