#!/usr/bin/env bash
# Takes screenshots of an agentsim report in headless Chromium, with every network request
# of the browser's own turned off, so that a person can look at what a report shows.
#
#   scripts/report-screenshot.sh report.html [out.png] [width] [height]
#
# Needs Debian's chromium (apt-get install -y chromium fonts-liberation). The PNG defaults to
# the report's name with .png; the window is 1400 × 4000 CSS pixels unless told.
set -euo pipefail
html=${1:?usage: $0 report.html [out.png] [width] [height]}
png=${2:-${html%.html}.png}
width=${3:-1400}
height=${4:-4000}
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
	echo "report-screenshot: chromium not found; install it with: apt-get install -y chromium fonts-liberation" >&2
	exit 1
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--disable-background-networking --disable-component-update --disable-sync \
	--disable-default-apps --no-first-run --user-data-dir="$profile" \
	--window-size="$width,$height" --screenshot="$(realpath -m "$png")" \
	"file://$(realpath "$html")" 2>/dev/null
echo "report-screenshot: $png"
