package report

import "html/template"

// pageTemplate is the report page. Everything it needs is in it: no script, no font, no image
// or style sheet from anywhere else.
var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 1.5em auto; max-width: 1120px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
h3 { font-size: 1.05em; margin-bottom: 0.3em; }
.run { border: 1px solid #ddd; border-radius: 6px; padding: 0.6em 1em; margin: 0.8em 0; }
.verdict { font-weight: bold; padding: 0.1em 0.5em; border-radius: 4px; color: #fff; }
.good { background: #3a8a3a; } .bad { background: #c62828; }
.meta { color: #555; font-size: 0.9em; }
ul.evidence { margin: 0.4em 0; padding-left: 1.3em; font-size: 0.92em; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.7em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f4f4f4; }
svg { max-width: 100%; height: auto; display: block; margin: 0.3em 0; }
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 0.5em; }
.legend span { display: inline-block; margin-right: 1.2em; font-size: 0.9em; }
.legend i { display: inline-block; width: 1.4em; height: 0.8em; margin-right: 0.35em; vertical-align: middle; }
.legend i.mark { width: 0.25em; height: 1.1em; }
.note { color: #555; font-size: 0.88em; }
.warn { color: #8a4b00; background: #fff4e0; padding: 0.2em 0.5em; margin: 0.3em 0; font-size: 0.92em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">{{len .Runs}} run{{if gt (len .Runs) 1}}s, overlaid where they share axes{{end}}. All times are simulated seconds since each run started.
<a href="#verdict">verdict</a> ·{{if .Curve}} <a href="#curve">throughput curve</a> ·{{end}} <a href="#timelines">timelines</a> · <a href="#requests">requests per agent</a> · <a href="#latency">latency distributions</a></p>

<h2 id="verdict">Verdict and evidence</h2>
{{range .Runs}}<div class="run">
<div><b>{{.Label}}</b> <span class="verdict {{if .Good}}good{{else}}bad{{end}}">{{.Verdict}}</span> {{.Summary}}</div>
<div class="meta">{{.Command}}{{with .Workload}} · workload {{.}}{{end}} · {{.Shape}} · server {{.Server}}</div>
{{with .Conclusion}}<div>conclusion: {{.}}</div>{{end}}
{{range .Warnings}}<div class="warn">warning: {{.}}</div>{{end}}
{{with .Evidence}}<ul class="evidence">{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
</div>
{{end}}
<table>
<tr><th>figure</th>{{range .Headers}}<th>{{.}}</th>{{end}}</tr>
{{range .Figures}}<tr><td>{{.Name}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>

{{if .Curve}}<h2 id="curve">Throughput curve</h2>
<p class="note">{{.CurveNote}}.</p>
{{.Curve}}
{{end}}
<h2 id="timelines">Timelines</h2>
<p class="note">Dashed blue vertical lines mark the run's stops (duration reached, grace period over, watchdog, interrupt).</p>
{{range .Sections}}<h3>{{.Title}}</h3>
{{range .Charts}}{{.}}
{{end}}{{end}}

<h2 id="requests">Requests per agent</h2>
<div class="legend">{{range .Phases}}<span><i class="{{if .Mark}}mark{{end}}" style="background: {{.Color}}"></i>{{.Name}}</span>{{end}}<span><i class="mark" style="background: #1f4fb4"></i>stop</span></div>
{{range .Gantts}}<h3>{{.Label}}</h3>
<p class="note">{{.Note}}. Idle stretches are the agent reading, thinking or backing off.</p>
{{.Chart}}
{{end}}

<h2 id="latency">Latency distributions</h2>
<p class="note">Empirical cumulative distributions of successful requests (pacer wait: every acquisition).</p>
<div class="grid">{{range .Latency}}<div>{{.}}</div>{{end}}</div>

<p class="meta">Written by agentsim {{.Version}}.</p>
</body>
</html>
`))
