package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agentsim/agentsim/internal/engine"
)

// Param is one fitted profile key: its value in the key's unit, its standard error, and what
// it was fitted from.
type Param struct {
	Key    string
	Value  string
	SE     string
	Source string
}

// ExpError is how well the fitted profile explains one experiment: the root mean square of
// its relative errors over the points, beside the server's own spread between repeats.
type ExpError struct {
	Exp string
	// What names the figure compared (decode step, TTFT, …).
	What string
	// Points is how many points it covers.
	Points int
	// RMS is the fit's error; Spread the server's run-to-run spread, both relative (0.05 is 5 %).
	RMS, Spread float64
}

// Fit is the profile the experiments identify.
type Fit struct {
	// Profile is the fitted profile: the base's values where the data could not identify one.
	Profile *engine.Profile
	// Params are the fitted keys; Kept the base's, each "key: why".
	Params []Param
	Kept   []string
	// Errors are the fit's errors per experiment.
	Errors []ExpError
	// Evidence says why the engine kind was chosen.
	Evidence string
	// Notes are what else the data showed (a capped max_tokens, a refused prompt).
	Notes []string
	// Speed says how far the server's speed moved over the calibration, from its reference
	// requests (Data.References); empty when none were sent.
	Speed string
}

// decodeRow is one repeat of a decode point: the batch, the KV at the middle of the window in
// which every request was decoding, and the step time in it.
type decodeRow struct {
	exp   string
	point int
	b, k  float64
	step  float64 // seconds
}

// FitData fits a profile to the data, starting from base; chunk is the server's prefill batch
// (Options.ChunkTokens).
func FitData(d *Data, base *engine.Profile, chunk int) *Fit {
	p := *base
	f := &Fit{Profile: &p}
	ratio := f.tokenizer(d)
	f.batch(d)
	f.decode(d, ratio)
	f.kind(d, ratio, chunk)
	f.transfer(d)
	f.prefill(d, ratio, chunk)
	poolSized := f.kv(d, ratio)
	f.prefillPool(d, ratio)
	f.prefixCache(d, ratio)
	f.idleSlots(d)
	f.launchWork(d)
	f.context(d, ratio)
	f.speed(d)
	for exp, reasons := range d.Skipped {
		for _, r := range reasons {
			f.Notes = append(f.Notes, exp+": "+r)
		}
	}
	slices.Sort(f.Notes)
	switch {
	case p.KVCapacityTokens < p.MaxContextTokens && poolSized:
		// The pool's size was measured where it failed requests; the base's context limit was
		// not, and no context outgrows the pool.
		p.MaxContextTokens = p.KVCapacityTokens
		f.Notes = append(f.Notes, "max_context_tokens lowered to the fitted kv_capacity_tokens: no context outgrows the pool")
	case p.KVCapacityTokens < p.MaxContextTokens:
		p.KVCapacityTokens = p.MaxContextTokens
		f.Notes = append(f.Notes, "kv_capacity_tokens raised to max_context_tokens, so one full context fits")
	}
	return f
}

// fitted records a fitted key.
func (f *Fit) fitted(key, value, se, source string) {
	f.Params = append(f.Params, Param{Key: key, Value: value, SE: se, Source: source})
}

// kept records a key the data did not identify.
func (f *Fit) kept(key, why string) { f.Kept = append(f.Kept, key+": "+why) }

// promptTokens is a request's prompt in server tokens: usage's, or the estimate × ratio.
func promptTokens(o *Obs, ratio float64) float64 {
	if o.PromptTokens > 0 {
		return float64(o.PromptTokens)
	}
	return float64(o.Request.Estimate) * ratio
}

// tokenizer fits tokenizer_ratio from usage over every completed request.
func (f *Fit) tokenizer(d *Data) float64 {
	var sum, est float64
	var each []float64
	for i := range d.Points {
		for _, o := range d.Points[i].OK() {
			if o.PromptTokens > 0 && o.Request.Estimate > 0 {
				sum, est = sum+float64(o.PromptTokens), est+float64(o.Request.Estimate)
				each = append(each, float64(o.PromptTokens)/float64(o.Request.Estimate))
			}
		}
	}
	if len(each) == 0 {
		f.kept("tokenizer_ratio", "the server sent no usage")
		return max(f.Profile.TokenizerRatio, 1)
	}
	r := sum / est
	lo, hi := slices.Min(each), slices.Max(each)
	f.Profile.TokenizerRatio = round(r, 4)
	f.fitted("tokenizer_ratio", fmt.Sprintf("%.4f", r), fmt.Sprintf("%.4f", stddev(each)/math.Sqrt(float64(len(each)))),
		fmt.Sprintf("usage.prompt_tokens / agentsim's estimate over %d requests (each %.3f–%.3f)", len(each), lo, hi))
	return r
}

// batch sets max_running from the largest-batch point.
func (f *Fit) batch(d *Data) {
	ms := d.Of(ExpBatch)
	if len(ms) == 0 {
		f.kept("max_running", "the largest-batch experiment did not run")
		return
	}
	found := maxRunning(ms[0].Runs[0])
	n := ms[0].Point.Batch
	switch {
	case !found.all:
		f.Profile.MaxRunning = found.n
		f.fitted("max_running", fmt.Sprint(found.n), "0", fmt.Sprintf("%d of %d requests sent at once had their first token before the first finished", found.n, n))
	case f.Profile.MaxRunning >= n:
		f.kept("max_running", fmt.Sprintf("all %d requests sent at once ran together: at least %d, the base's %d kept", n, n, f.Profile.MaxRunning))
	default:
		f.fitted("max_running", fmt.Sprint(n), "lower bound", fmt.Sprintf("all %d requests sent at once ran together (the base's %d was fewer)", n, f.Profile.MaxRunning))
		f.Profile.MaxRunning = n
	}
}

// decodeRows reads the decode points' steps.
func decodeRows(d *Data, ratio float64) []decodeRow {
	var rows []decodeRow
	for i := range d.Points {
		m := &d.Points[i]
		if m.Point.Exp != ExpConcurrency && m.Point.Exp != ExpContext {
			continue
		}
		for _, run := range m.Runs {
			if row, ok := steadyStep(run, ratio); ok {
				row.exp, row.point = m.Point.Exp, i
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// steadyStep is one run's decode step: in the window in which every request was decoding
// (after the last first token, before the first last token), each request's time per token,
// averaged; false when a request failed or the window holds too few tokens.
func steadyStep(run []Obs, ratio float64) (decodeRow, bool) {
	var lo, hi time.Time
	for i := range run {
		o := &run[i]
		if !o.OK() || len(o.Chunks) < 4 {
			return decodeRow{}, false
		}
		if first := o.Chunks[0]; first.After(lo) {
			lo = first
		}
		if last := o.Chunks[len(o.Chunks)-1]; hi.IsZero() || last.Before(hi) {
			hi = last
		}
	}
	mid := lo.Add(hi.Sub(lo) / 2)
	var steps, kv float64
	for i := range run {
		o := &run[i]
		perChunk := float64(o.Tokens()) / float64(len(o.Chunks))
		var in []time.Time
		before := 0
		for _, t := range o.Chunks {
			if !t.Before(lo) && !t.After(hi) {
				in = append(in, t)
			}
			if t.Before(mid) {
				before++
			}
		}
		if len(in) < 4 {
			return decodeRow{}, false
		}
		steps += in[len(in)-1].Sub(in[0]).Seconds() / (float64(len(in)-1) * perChunk)
		kv += promptTokens(o, ratio) + float64(before)*perChunk
	}
	return decodeRow{b: float64(len(run)), k: kv, step: steps / float64(len(run))}, true
}

// decodeTerms are the decode step's terms, in the order of its formula.
var decodeTerms = []struct {
	key  string
	feat func(r decodeRow) float64
}{
	{"decode_base", func(decodeRow) float64 { return 1 }},
	{"decode_per_seq", func(r decodeRow) float64 { return r.b }},
	{"decode_per_kv_token_ns", func(r decodeRow) float64 { return r.k }},
	{"decode_per_seq_kv_token_ns", func(r decodeRow) float64 { return r.b * r.k }},
	{"decode_multi_seq", func(r decodeRow) float64 {
		if r.b >= 2 {
			return 1
		}
		return 0
	}},
}

// decode fits the decode step a + b·B + c·K + d·B·K (+ e when B ≥ 2), dropping each term the data cannot tell
// from zero (its estimate under two standard errors, or under 2 % of every step it is in).
func (f *Fit) decode(d *Data, ratio float64) { f.decodeFrom(decodeRows(d, ratio)) }

// decodeFrom fits the decode step to rows.
func (f *Fit) decodeFrom(rows []decodeRow) {
	if len(rows) < 3 {
		for _, t := range decodeTerms {
			f.kept(t.key, fmt.Sprintf("%d decode points measured, too few to fit", len(rows)))
		}
		return
	}
	use := []int{0, 1, 2, 3, 4}
	var fit lsq
	for {
		x := make([][]float64, len(rows))
		y := make([]float64, len(rows))
		for i, r := range rows {
			for _, j := range use {
				x[i] = append(x[i], decodeTerms[j].feat(r))
			}
			y[i] = r.step
		}
		var err error
		if fit, err = fitLSQ(x, y); err != nil {
			f.Notes = append(f.Notes, "decode fit: "+err.Error())
		}
		drop := -1
		for i, j := range use {
			if j == 0 || err != nil {
				continue
			}
			small := fit.beta[i] <= 2*fit.se[i]
			share := 0.0
			for _, r := range rows {
				share = math.Max(share, fit.beta[i]*decodeTerms[j].feat(r)/r.step)
			}
			if small || share < 0.02 {
				drop = i
			}
		}
		if drop < 0 || err != nil {
			if err != nil {
				use = nil
			}
			break
		}
		use = slices.Delete(use, drop, drop+1)
	}
	f.setDecode(rows, use, fit)
}

// setDecode writes the decode fit into the profile.
func (f *Fit) setDecode(rows []decodeRow, use []int, fit lsq) {
	p := f.Profile
	p.DecodeBase, p.DecodePerSeq, p.DecodePerKVTokenNs, p.DecodePerSeqKVTokenNs, p.DecodeMultiSeq = time.Millisecond, 0, 0, 0, 0
	src := fmt.Sprintf("%d decode windows (concurrency and context experiments)", len(rows))
	if rows[0].exp == ExpRecorded {
		src = fmt.Sprintf("%d recorded requests' decode", len(rows))
	}
	for i, j := range use {
		v, se := fit.beta[i], fit.se[i]
		key := decodeTerms[j].key
		switch j {
		case 0:
			p.DecodeBase = max(seconds(v), time.Microsecond)
			f.fitted(key, p.DecodeBase.String(), seconds(se).String(), src)
		case 1:
			p.DecodePerSeq = max(seconds(v), 0)
			f.fitted(key, p.DecodePerSeq.String(), seconds(se).String(), src)
		case 2:
			p.DecodePerKVTokenNs = round(v*1e9, 4)
			f.fitted(key, fmt.Sprintf("%.4g", v*1e9), fmt.Sprintf("%.2g", se*1e9), src)
		case 3:
			p.DecodePerSeqKVTokenNs = round(v*1e9, 6)
			f.fitted(key, fmt.Sprintf("%.4g", v*1e9), fmt.Sprintf("%.2g", se*1e9), src)
		case 4:
			p.DecodeMultiSeq = max(seconds(v), 0)
			f.fitted(key, p.DecodeMultiSeq.String(), seconds(se).String(), src+": a step of two or more requests, beyond what the other terms give it")
		}
	}
	for j, t := range decodeTerms {
		if !slices.Contains(use, j) && j > 0 {
			f.fitted(t.key, "0", "-", src+": indistinguishable from 0")
		}
	}
	for _, exp := range []string{ExpConcurrency, ExpContext, ExpRecorded} {
		var pred, obs []float64
		byPoint := map[int][]float64{}
		for _, r := range rows {
			if r.exp != exp {
				continue
			}
			pred = append(pred, p.DecodeStep(int(r.b), int(r.k)).Seconds())
			obs = append(obs, r.step)
			byPoint[r.point] = append(byPoint[r.point], r.step)
		}
		if len(obs) > 0 {
			f.Errors = append(f.Errors, ExpError{Exp: exp, What: "decode step", Points: len(byPoint), RMS: rmsRel(pred, obs), Spread: spread(byPoint)})
		}
	}
}

// seconds converts seconds to a duration, rounded to the nanosecond.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// round rounds x to n significant digits.
func round(x float64, n int) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	e := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(x))))
	return math.Round(x*e) / e
}

// rmsRel is the root mean square of (pred − obs)/obs.
func rmsRel(pred, obs []float64) float64 {
	var s float64
	for i := range obs {
		e := (pred[i] - obs[i]) / obs[i]
		s += e * e
	}
	return math.Sqrt(s / float64(len(obs)))
}

// spread is the server's own spread: per point with repeats, (max − min)/mean of its values,
// averaged over the points.
func spread(byPoint map[int][]float64) float64 {
	var s float64
	n := 0
	for _, v := range byPoint {
		if len(v) < 2 {
			continue
		}
		mean := 0.0
		for _, x := range v {
			mean += x
		}
		mean /= float64(len(v))
		s += (slices.Max(v) - slices.Min(v)) / mean
		n++
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

// stddev is the sample standard deviation.
func stddev(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	mean := 0.0
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	var s float64
	for _, x := range v {
		s += (x - mean) * (x - mean)
	}
	return math.Sqrt(s / float64(len(v)-1))
}

// percent formats a relative figure.
func percent(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f %%", 100*x)
}

// speedMoved is how far the reference requests may move from the first before Fit.Speed says
// the fit mixes the server's speeds: the 15 % within which calibrate check wants the twin's
// figures (docs/calibrate.md §4).
const speedMoved = 0.15

// speed says how far the server's speed moved over the calibration: each reference request's
// TTFT and TPOT, and the range of either against the first. A calibration's figures mix the
// speeds of its experiments' moments, and a server that moved more than speedMoved says so,
// for the check after it will show the same in its reference rows (docs/calibrate.md §1).
// What moved may be the server's state rather than its speed: on llama-server, a reference
// whose slot kept its prompt's first cells far up the KV spans every cell below them.
func (f *Fit) speed(d *Data) {
	if len(d.References) == 0 {
		return
	}
	var at []string
	var ttft, tpot []time.Duration
	for _, r := range d.References {
		if o := r.Obs; o.OK() && o.TPOT() > 0 {
			at, ttft, tpot = append(at, r.At.Round(time.Second).String()), append(ttft, o.TTFT()), append(tpot, o.TPOT())
		}
	}
	if len(ttft) < 2 {
		f.Speed = fmt.Sprintf("%d of %d reference requests completed: how far the server's speed moved over the calibration is not known", len(ttft), len(d.References))
		return
	}
	var worst float64
	moved := func(v []time.Duration) string {
		var lo, hi float64
		for _, x := range v[1:] {
			r := x.Seconds()/v[0].Seconds() - 1
			lo, hi = min(lo, r), max(hi, r)
		}
		worst = max(worst, -lo, hi)
		return fmt.Sprintf("%+.1f to %+.1f %%", 100*lo, 100*hi)
	}
	list := func(v []time.Duration) string {
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = x.Round(10 * time.Microsecond).String()
		}
		return strings.Join(s, ", ")
	}
	f.Speed = fmt.Sprintf("reference requests (a fresh %d-token prompt alone after a flush, %d tokens out) at %s: TTFT %s (%s against the first), TPOT %s (%s)",
		d.References[0].Prompt, ReferenceOutput, strings.Join(at, ", "), list(ttft), moved(ttft), list(tpot), moved(tpot))
	if worst > speedMoved {
		f.Speed += fmt.Sprintf(": the server's speed or state moved more than %.0f %% during the calibration, so the fit mixes them; calibrate again where they hold, or read calibrate check beside its reference rows", 100*speedMoved)
	} else {
		f.Speed += fmt.Sprintf(": the server held its speed within %.0f %%", 100*speedMoved)
	}
}
