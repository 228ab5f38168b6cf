// Shared by the real-client scripts: reading the simulator's address, finding its model, and
// printing the one JSON summary the Go suite (realclients_test.go) reads.

// baseURL is the simulator's base URL from the command line (http://127.0.0.1:PORT), without a
// trailing slash; the scripts add /v1.
export function baseURL() {
  const url = process.argv[2];
  if (!url || !/^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d+\/?$/.test(url)) {
    fail(`usage: node ${process.argv[1]} http://127.0.0.1:PORT (a loopback simulator), got ${JSON.stringify(url)}`);
  }
  return url.replace(/\/$/, '');
}

// servedModel asks the simulator which model it serves (GET /v1/models), so the scripts need
// no model name of their own.
export async function servedModel(base) {
  const res = await fetch(`${base}/v1/models`);
  if (!res.ok) throw new Error(`GET ${base}/v1/models: ${res.status}`);
  const body = await res.json();
  return body.data[0].id;
}

// report prints the summary as one line of JSON on stdout and sets the exit code: 0 when ok.
export function report(summary) {
  process.stdout.write(JSON.stringify(summary) + '\n');
  process.exitCode = summary.ok ? 0 : 1;
}

// fail prints a summary that says what went wrong and exits 1.
export function fail(message) {
  report({ ok: false, error: message });
  process.exit(1);
}
