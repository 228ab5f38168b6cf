package gate

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
)

// WriteText prints the report for a terminal: the summary line, then one line per rule,
// "  FAIL  e2e.p90 = 80.3 s, baseline 40.1 s: breaks …".
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString(r.Summary() + "\n")
	for _, x := range r.Results {
		fmt.Fprintf(&b, "  %-4s  %s\n", strings.ToUpper(string(x.Status)), x.Why)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// junitSuites is the JUnit XML document: one suite, one test case per rule.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML: a suite named name, one test case per rule
// (named by the rule), a failure or skipped element saying why.
func (r Report) WriteJUnit(w io.Writer, name string) error {
	s := junitSuite{Name: name}
	for _, x := range r.Results {
		c := junitCase{Name: x.Rule.String(), Classname: "agentsim.thresholds"}
		switch x.Status {
		case Fail:
			c.Failure = &junitMessage{Message: x.Why, Text: x.Why}
			s.Failures++
		case Skip:
			c.Skipped = &junitMessage{Message: x.Why}
			s.Skipped++
		default:
			c.SystemOut = x.Why
		}
		s.Cases = append(s.Cases, c)
	}
	s.Tests = len(s.Cases)
	doc := junitSuites{Name: name, Tests: s.Tests, Failures: s.Failures, Skipped: s.Skipped, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteMarkdown writes the report as a Markdown table for a pull-request comment, under a
// heading that says title and how the rules came out.
func (r Report) WriteMarkdown(w io.Writer, title string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s — %s\n\n", title, r.Summary())
	b.WriteString("| | figure | rule | baseline | new | change |\n|---|---|---|---|---|---|\n")
	for _, x := range r.Results {
		base, new, change := x.BaseVerdict, x.NewVerdict, ""
		if x.Rule.Figure != VerdictFigure {
			base, new = formatOrDash(x.Figure.Unit, x.Base), x.Figure.Unit.Format(x.New)
			if x.Change != nil {
				change = x.Change.String()
			}
		}
		fmt.Fprintf(&b, "| %s | `%s` | `%s` | %s | %s | %s |\n", statusMark[x.Status], x.Rule.Figure,
			cell(x.Rule.Text), cell(base), cell(new), cell(change))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var statusMark = map[Status]string{Pass: "✅ pass", Fail: "❌ **fail**", Skip: "⏭ skip"}

func formatOrDash(u Unit, v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return u.Format(v)
}

// cell escapes the characters that would break a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
