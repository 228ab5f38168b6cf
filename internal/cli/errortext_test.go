package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// flagWord is a command-line flag in a text: --fit-context, --sim-fault-param.
var flagWord = regexp.MustCompile(`(^|[^\w-])--[a-z][a-z0-9-]*`)

// TestLibraryErrorsNameNoFlag walks the source of every package below the command line —
// the public ones and the internal ones but this one — and fails on an error text that names a
// command-line flag: a string literal given to errors.New or fmt.Errorf, returned by an Error
// method, or set as a Problem's Message. A library names its settings (fault.threshold_tokens,
// request.idle_timeout); the command line says which flag sets them.
func TestLibraryErrorsNameNoFlag(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch filepath.ToSlash(rel) {
			case "cmd", "internal/cli", "examples", "scripts", "docs":
				return filepath.SkipDir // the command line, and what is no package of it
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		for _, lit := range errorTexts(t, path) {
			if flagWord.MatchString(lit.text) {
				found = append(found, rel+":"+strconv.Itoa(lit.line)+": "+lit.text)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("%d error texts below the command line name a flag; name the setting, and let the command line say which flag sets it:\n%s",
			len(found), strings.Join(found, "\n"))
	}
}

// errorText is a string literal of an error message and the line it is on.
type errorText struct {
	text string
	line int
}

// errorTexts returns the string literals of path that make error messages: the arguments of
// errors.New and fmt.Errorf, what an Error method returns, and a Problem's Message.
func errorTexts(t *testing.T, path string) []errorText {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []errorText
	literals := func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
				if s, err := strconv.Unquote(b.Value); err == nil {
					out = append(out, errorText{s, fset.Position(b.Pos()).Line})
				}
			}
			return true
		})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "errors" && sel.Sel.Name == "New" || pkg.Name == "fmt" && sel.Sel.Name == "Errorf") {
					literals(n)
					return false
				}
			}
		case *ast.FuncDecl:
			if n.Recv != nil && n.Name.Name == "Error" && n.Body != nil {
				literals(n.Body)
				return false
			}
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Message" {
				literals(n.Value)
				return false
			}
		}
		return true
	})
	return out
}

// TestCommandLineNamesTheFlag checks that where a library names a setting, the command line
// says the flag that sets it.
func TestCommandLineNamesTheFlag(t *testing.T) {
	keyed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) }))
	defer keyed.Close()
	windowless := vllmLike(t, "some/model", 0)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		// A server that wants a key: --api-key gives it.
		{"api key", []string{"run", "--server", keyed.URL}, ExitRuntime,
			"requires an API key: GET /v1/models → 401 without one; give it with --api-key or AGENTSIM_API_KEY"},
		// No window to fit to: --fit-context=TOKENS gives one.
		{"no window", append([]string{"run", "--server", windowless.URL, "--fit-context"}, quickSmoke...), ExitUsage,
			"--fit-context: the server lists no context window (max_model_len, or llama.cpp's meta.n_ctx) for model some/model: give it in tokens, --fit-context=TOKENS"},
		// serve's own fault flags.
		{"serve fault", []string{"serve", "--fault", "nope"}, ExitUsage, `--fault "nope": unknown fault; want one of`},
		{"serve fault param", []string{"serve", "--fault", "drop", "--fault-param", "fraction"}, ExitUsage, `--fault-param "fraction": want name.key=value`},
		// The embedded simulator's, under the names a command that embeds it takes.
		{"sim fault param", []string{"run", "--sim-fault", "drop", "--sim-fault-param", "errors.rate=1"}, ExitUsage,
			`--sim-fault-param "errors.rate=1": fault "errors" is not among the faults set`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, "--out", filepath.Join(t.TempDir(), "run"))
			if tc.args[0] == "serve" {
				args = append(tc.args, "--addr", "127.0.0.1:0")
			}
			code, out, stderr := execute(t, args...)
			assert.Equal(t, tc.code, code, "agentsim %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
}
