//go:build browser

package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportInBrowser opens a report in headless Chromium (go test -tags browser; needs
// Debian's chromium) through scripts/report-screenshot.sh: the page loads, the screenshot is
// taken, and the browser's network log shows no request from the page — while a copy of the
// page with one remote image does show one, so the check can fail. Set
// AGENTSIM_SCREENSHOTS=DIR to keep the report and its screenshot there for a person to look at.
func TestReportInBrowser(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Skip("chromium not installed: apt-get install -y chromium fonts-liberation")
	}
	var dir string
	runs := t.TempDir() // outlives the bubble
	synctest.Test(t, func(t *testing.T) { dir = smokeRun(t, runs, "smoke") })
	out := t.TempDir()
	if keep := os.Getenv("AGENTSIM_SCREENSHOTS"); keep != "" {
		out = keep
	}
	loaded, err := Load(dir)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, Render(&b, loaded, Options{Version: "browser test"}))
	page := filepath.Join(out, "report.html")
	require.NoError(t, os.WriteFile(page, b.Bytes(), 0o644))
	control := filepath.Join(out, "control.html")
	require.NoError(t, os.WriteFile(control, []byte(strings.Replace(b.String(), "<h1>", `<img src="http://example.invalid/x.png"><h1>`, 1)), 0o644))

	script, err := filepath.Abs("../../scripts/report-screenshot.sh")
	require.NoError(t, err)
	shot := func(html string) (string, error) {
		o, err := exec.CommandContext(t.Context(), "bash", script, html).CombinedOutput()
		return string(o), err
	}
	o, err := shot(page)
	require.NoError(t, err, "%s", o)
	assert.Contains(t, o, "no network request from the page")
	fi, err := os.Stat(filepath.Join(out, "report.png"))
	require.NoError(t, err)
	assert.Greater(t, fi.Size(), int64(50_000), "a screenshot of a drawn page, not a blank one")

	o, err = shot(control)
	assert.Error(t, err, "the control page's remote image went unnoticed: %s", o)
	assert.Contains(t, o, "example.invalid")
}
