package sweep

import (
	"errors"
	"path/filepath"

	"github.com/agentsim/agentsim/results"
)

// Collect reads the plan in dir (a sweep directory or its sweep.json) and the run
// directories it lists, wherever the runs executed, and builds the table. A run directory
// without results.json counts as not run; one that cannot be read is named in
// Summary.Unreadable and counts as not run too.
func Collect(dir string) (*Plan, *Summary, error) {
	p, planDir, err := ReadPlan(dir)
	if err != nil {
		return nil, nil, err
	}
	figs := map[int]*Figures{}
	var unreadable []string
	for _, r := range p.Runs {
		f, err := ReadFigures(filepath.Join(planDir, filepath.FromSlash(r.Dir)))
		switch {
		case errors.Is(err, ErrNoRun):
		case err != nil:
			unreadable = append(unreadable, err.Error())
		default:
			figs[r.Index] = f
		}
	}
	s := Aggregate(p, figs)
	s.Unreadable = unreadable
	return p, s, nil
}

// Done reports whether run r of the plan in planDir has finished: its directory holds a
// results.json of a run that was not interrupted.
func Done(planDir string, r Run) bool {
	res, err := results.Read(filepath.Join(planDir, filepath.FromSlash(r.Dir)))
	return err == nil && !res.Interrupted
}
