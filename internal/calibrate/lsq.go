package calibrate

import (
	"errors"
	"math"
)

// lsq is a weighted least-squares fit y ≈ Σ β_j·x_j: the coefficients, their standard errors,
// and the residuals' root mean square relative to y.
type lsq struct {
	beta, se []float64
	rel      float64
}

// fitLSQ fits rows x to y with weights 1/y² (every point's relative error counts alike).
// Columns are scaled to a largest value of 1 for the solve, so terms of very different sizes
// (a batch of 4, a context of 100 000 tokens) stay well conditioned.
func fitLSQ(x [][]float64, y []float64) (lsq, error) {
	n, k := len(y), 0
	if n > 0 {
		k = len(x[0])
	}
	if n < k || k == 0 {
		return lsq{}, errors.New("fewer points than parameters")
	}
	scale := make([]float64, k)
	for _, row := range x {
		for j, v := range row {
			scale[j] = math.Max(scale[j], math.Abs(v))
		}
	}
	scaled := make([][]float64, n)
	for i, row := range x {
		scaled[i] = make([]float64, k)
		for j, v := range row {
			if scale[j] > 0 {
				scaled[i][j] = v / scale[j]
			}
		}
	}
	f, err := solve(scaled, y)
	for j := range f.beta {
		if scale[j] > 0 {
			f.beta[j] /= scale[j]
			f.se[j] /= scale[j]
		}
	}
	return f, err
}

// solve is fitLSQ on scaled columns.
func solve(x [][]float64, y []float64) (lsq, error) {
	n, k := len(y), len(x[0])
	a := make([][]float64, k)
	b := make([]float64, k)
	for j := range a {
		a[j] = make([]float64, k)
	}
	for i := range y {
		w := 1 / (y[i] * y[i])
		for j := range k {
			b[j] += w * x[i][j] * y[i]
			for l := range k {
				a[j][l] += w * x[i][j] * x[i][l]
			}
		}
	}
	inv, ok := invert(a)
	if !ok {
		return lsq{}, errors.New("the points do not separate the parameters")
	}
	f := lsq{beta: make([]float64, k), se: make([]float64, k)}
	for j := range k {
		for l := range k {
			f.beta[j] += inv[j][l] * b[l]
		}
	}
	var rss float64
	for i := range y {
		pred := 0.0
		for j := range k {
			pred += f.beta[j] * x[i][j]
		}
		rel := (pred - y[i]) / y[i]
		rss += rel * rel
	}
	f.rel = math.Sqrt(rss / float64(n))
	dof := float64(n - k)
	s2 := 0.0
	if dof > 0 {
		s2 = rss / dof
	}
	for j := range k {
		f.se[j] = math.Sqrt(math.Max(s2*inv[j][j], 0))
	}
	return f, nil
}

// invert inverts a square matrix by Gauss–Jordan elimination with partial pivoting; false
// when it is singular.
func invert(m [][]float64) ([][]float64, bool) {
	k := len(m)
	a := make([][]float64, k)
	for i := range m {
		a[i] = make([]float64, 2*k)
		copy(a[i], m[i])
		a[i][k+i] = 1
	}
	for c := range k {
		p := c
		for r := c + 1; r < k; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-300 {
			return nil, false
		}
		a[c], a[p] = a[p], a[c]
		piv := a[c][c]
		for j := range a[c] {
			a[c][j] /= piv
		}
		for r := range k {
			if r == c || a[r][c] == 0 {
				continue
			}
			f := a[r][c]
			for j := range a[r] {
				a[r][j] -= f * a[c][j]
			}
		}
	}
	inv := make([][]float64, k)
	for i := range a {
		inv[i] = a[i][k:]
	}
	return inv, true
}
