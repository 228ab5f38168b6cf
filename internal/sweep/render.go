package sweep

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/results"
)

// The files the table is written to, beside the plan.
const (
	TableFile = "summary.txt"
	CSVFile   = "summary.csv"
	JSONFile  = "summary.json"
)

// none is what the table shows for a figure no run had.
const none = "—"

// WriteTable writes the table as the console shows it: a header line, one row per cell, and
// notes on runs that did not finish or whose harness lag distorted them. Times are simulated.
func WriteTable(w io.Writer, s *Summary) error {
	fmt.Fprintf(w, "sweep of %s: %s × %s; verdicts per cell across seeds; times simulated\n", s.Workload,
		plural.Of(len(s.Cells), "cell"), plural.Of(s.Seeds, "seed"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := append(append([]string{}, s.Keys...), "fault", "verdicts", "goodput", "e2e p50", "e2e p99", "pacer wait p99", "first stall")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, c := range s.Cells {
		verdicts := c.VerdictText
		if c.LagDistorted > 0 {
			verdicts += " *"
		}
		row := append(append([]string{}, c.Values...), c.Fault, verdicts, goodput(c), seconds(c.E2EP50S), seconds(c.E2EP99S),
			seconds(c.PacerWaitP99S), firstStall(c))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range s.Notes() {
		fmt.Fprintln(w, n)
	}
	return nil
}

// Notes are the lines under the table: runs that did not finish, unreadable run directories,
// and runs whose harness lag distorted their figures.
func (s *Summary) Notes() []string {
	var notes []string
	if s.LagDistorted > 0 {
		notes = append(notes, fmt.Sprintf("* the harness's scheduling lag distorted %d runs' figures (their results.json harness.warning): run fewer at once (--parallel) or lower --speedup", s.LagDistorted))
	}
	if n := len(s.NotRun); n > 0 {
		notes = append(notes, fmt.Sprintf("%d runs did not finish (indices %s)%s: run the sweep again with the same --out to resume", n, indexList(s.NotRun), interruptedNote(s.Interrupted)))
	}
	for _, u := range s.Unreadable {
		notes = append(notes, "unreadable run: "+u)
	}
	return notes
}

func interruptedNote(interrupted []int) string {
	if len(interrupted) == 0 {
		return ""
	}
	return fmt.Sprintf(", %d of them interrupted (%s)", len(interrupted), indexList(interrupted))
}

// indexList renders indices as ranges: "0-3,7".
func indexList(xs []int) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[j]))
		} else {
			parts = append(parts, strconv.Itoa(xs[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func goodput(c Cell) string {
	if c.Finished == 0 {
		return none
	}
	return fmt.Sprintf("%.0f rounds/h", c.GoodputPerHour)
}

func seconds(s *float64) string {
	if s == nil {
		return none
	}
	return results.Seconds(*s)
}

// firstStall is the median time to the first stall and how many finished runs stalled:
// "397 s (3/3)".
func firstStall(c Cell) string {
	if c.FirstStallS == nil {
		return none
	}
	return fmt.Sprintf("%s (%d/%d)", results.Seconds(*c.FirstStallS), c.Stalled, c.Finished)
}

// verdictColumns are the CSV's verdict count columns, in results.VerdictKinds order.
func verdictColumns() []results.VerdictKind { return results.VerdictKinds }

// WriteCSV writes one row per cell: the grid values, the fault, the run counts, the verdict
// text and a count column per verdict kind, then the figures in simulated seconds (empty
// where no run had one).
func WriteCSV(w io.Writer, s *Summary) error {
	cw := csv.NewWriter(w)
	head := append(append([]string{}, s.Keys...), "fault", "runs", "finished", "verdicts")
	for _, k := range verdictColumns() {
		head = append(head, string(k))
	}
	head = append(head, "goodput_rounds_per_sim_hour", "e2e_p50_s", "e2e_p99_s", "pacer_wait_p99_s",
		"first_stall_median_s", "stalled_runs", "lag_distorted_runs", "expected")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, c := range s.Cells {
		row := append(append([]string{}, c.Values...), c.Fault, strconv.Itoa(c.Runs), strconv.Itoa(c.Finished), c.VerdictText)
		for _, k := range verdictColumns() {
			row = append(row, strconv.Itoa(c.Verdicts[k]))
		}
		row = append(row, num(&c.GoodputPerHour), num(c.E2EP50S), num(c.E2EP99S), num(c.PacerWaitP99S),
			num(c.FirstStallS), strconv.Itoa(c.Stalled), strconv.Itoa(c.LagDistorted), expected(c.Expected))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func num(x *float64) string {
	if x == nil {
		return ""
	}
	return strconv.FormatFloat(*x, 'f', -1, 64)
}

func expected(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}

// WriteFiles writes the table, its CSV, its JSON and its page with the verdict heatmap into
// the sweep directory dir, each atomically.
func WriteFiles(dir string, s *Summary) error {
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode sweep summary: %w", err)
	}
	var table, csvText, page strings.Builder
	if err := WriteTable(&table, s); err != nil {
		return err
	}
	if err := WriteCSV(&csvText, s); err != nil {
		return err
	}
	if err := WriteHTML(&page, s); err != nil {
		return err
	}
	for name, data := range map[string][]byte{TableFile: []byte(table.String()), CSVFile: []byte(csvText.String()),
		JSONFile: append(js, '\n'), HTMLFile: []byte(page.String())} {
		if err := writeAtomic(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	return nil
}

// writeAtomic writes data to path through a temporary file and a rename.
func writeAtomic(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}
