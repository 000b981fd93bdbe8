package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestStatementsNumberTheirParameters: the store's statements are sent as
// they are written (statement.go), so a ? or :name parameter would reach
// PostgreSQL as a syntax error, on the first run of that statement there.
// No string literal of the store's code holds one.
func TestStatementsNumberTheirParameters(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	// A parameter: ? or :name after an operator, a comma or a bracket
	// (not :: casts, not a URL's ?query).
	param := regexp.MustCompile(`(?:[=<>(,]|\bIN|\bAND|\bOR|\bLIMIT|\bOFFSET|\bMATCH|\bBETWEEN|\bTHEN|\bELSE|\bWHEN|\bSELECT)\s*(\?|:[a-z_]+\b)`)
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			checked++
			if m := param.FindStringSubmatch(s); m != nil {
				t.Errorf("%s: a statement with a %q parameter: %.120q", fset.Position(lit.Pos()), m[1], s)
			}
			return true
		})
	}
	if checked < 100 {
		t.Fatalf("only %d string literals checked", checked)
	}
}
