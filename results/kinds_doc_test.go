package results

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocsCountVerdictKinds checks that the docs count the verdict kinds as VerdictKinds
// lists them, and name each one: a kind added to the list and not to the docs fails here.
func TestDocsCountVerdictKinds(t *testing.T) {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	n := words[len(VerdictKinds)]
	counted := regexp.MustCompile(`(?i)\b(` + strings.Join(words, "|") + `) (verdict kinds|kinds\b|verdicts \(results)`)
	for _, name := range []string{"../docs/verdicts.md", "../docs/README.md", "../internal/diagnose/doc.go"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(b)), " ")
		found := counted.FindAllStringSubmatch(text, -1)
		if len(found) == 0 && !strings.Contains(text, "the "+n+" verdicts of results.VerdictKinds") {
			t.Errorf("%s counts no verdict kinds; want %q", name, n)
		}
		for _, m := range found {
			if !strings.EqualFold(m[1], n) {
				t.Errorf("%s says %q; VerdictKinds has %s", name, m[0], n)
			}
		}
		if name == "../docs/verdicts.md" {
			for _, k := range VerdictKinds {
				if !strings.Contains(text, "`"+string(k)+"`") {
					t.Errorf("%s does not name %s", name, k)
				}
			}
		}
	}
}
