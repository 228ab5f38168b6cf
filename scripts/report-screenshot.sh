#!/usr/bin/env bash
# Takes a screenshot of an agentsim report in headless Chromium, so that a person can look at
# what a report shows, and checks that the page asked for nothing over the network.
#
#   scripts/report-screenshot.sh report.html [out.png] [width] [height]
#
# Needs Debian's chromium (apt-get install -y chromium fonts-liberation). The PNG defaults to
# the report's name with .png; the window is 1400 × 4400 CSS pixels unless told. The browser's
# own background traffic is sent to a closed loopback port, so nothing leaves the machine; the
# network log then shows whether the page itself asked for anything (exit 1 if it did).
set -euo pipefail
html=${1:?usage: $0 report.html [out.png] [width] [height]}
png=${2:-${html%.html}.png}
width=${3:-1400}
height=${4:-4400}
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
	--proxy-server=127.0.0.1:1 --host-resolver-rules="MAP * ~NOTFOUND" \
	--log-net-log="$profile/netlog.json" \
	--window-size="$width,$height" --screenshot="$(realpath -m "$png")" \
	"file://$(realpath "$html")" 2>/dev/null
# Requests the page made have its opaque file:// origin, "null", as their initiator; the
# browser's own have none.
if n=$(grep -o '"initiator":"null"' "$profile/netlog.json" | wc -l) && ((n > 0)); then
	echo "report-screenshot: the page made $n network request(s); the log holds these URLs (the browser's own among them):" >&2
	grep -o '"url":"[^"]*"' "$profile/netlog.json" | sort -u >&2
	exit 1
fi
echo "report-screenshot: $png (no network request from the page)"
