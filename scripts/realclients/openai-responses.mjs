// The OpenAI Node SDK (package openai) drives tool conversations through the Responses API
// (POST /v1/responses) against agentsim serve and checks what docs/responses.md promises: the
// event order (response.created first, response.completed last with usage), function_call
// items with call_id, name and JSON arguments that satisfy their tool's schema, a web_search
// tool accepted and never called as a function, and a final message after the tool outputs —
// streamed with responses.stream (continuing each response by previous_response_id) and
// whole with responses.create (sending the whole input back, store: false). It prints one JSON
// line: {ok, checks: [{name, ok, detail}], ...figures}.
//
//   node openai-responses.mjs http://127.0.0.1:PORT
//
// The tools only return canned results: nothing here touches files, the network beyond the
// loopback simulator, or runs commands.
import OpenAI from 'openai';
import Ajv from 'ajv';
import { baseURL, servedModel, report, fail } from './common.mjs';

// TOOLS are two harmless function tools, in the Responses API's flat shape, and a built-in
// tool the simulated model must never call as a function.
const TOOLS = [
  {
    type: 'function',
    name: 'get_weather',
    description: 'The current weather in a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', minLength: 1 }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
      required: ['city', 'unit'],
      additionalProperties: false,
    },
    strict: true,
  },
  {
    type: 'function',
    name: 'lookup_order',
    description: 'Look an order up by its id.',
    parameters: {
      type: 'object',
      properties: { order_id: { type: 'string', pattern: '^ORD-[0-9]{6}$' }, include_items: { type: 'boolean' } },
      required: ['order_id', 'include_items'],
      additionalProperties: false,
    },
    strict: true,
  },
  { type: 'web_search' },
];

// CANNED are the tools' results: fixed text, whatever the arguments.
const CANNED = {
  get_weather: (a) => ({ city: a.city, temperature: 18, unit: a.unit, sky: 'cloudy' }),
  lookup_order: (a) => ({ order_id: a.order_id, status: 'shipped', items: a.include_items ? ['mug'] : [] }),
};

// MAX_STEPS bounds a loop: the simulator draws at most a few dozen steps (docs/engine.md §8).
const MAX_STEPS = 60;

const INSTRUCTIONS = 'You are a support assistant. Use the tools to answer.';
const TASK = 'Where is order ORD-123456, and what is the weather there?';

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = Object.fromEntries(TOOLS.filter((t) => t.type === 'function').map((t) => [t.name, ajv.compile(t.parameters)]));

const checks = [];

// check records one named check; detail says what was seen when it failed.
function check(name, ok, detail = '') {
  checks.push(ok ? { name, ok } : { name, ok, detail });
  return ok;
}

// checkCalls checks a response's function_call items and returns the outputs that answer them.
function answer(response, how) {
  const outputs = [];
  for (const item of response.output) {
    if (item.type !== 'function_call') continue;
    check(`${how}: a function_call has call_id and name`, !!item.call_id && !!item.name, JSON.stringify(item));
    check(`${how}: only function tools are called`, item.name in validators, item.name);
    let args;
    try {
      args = JSON.parse(item.arguments);
    } catch (err) {
      check(`${how}: arguments are JSON`, false, item.arguments);
      continue;
    }
    const valid = validators[item.name]?.(args);
    check(`${how}: arguments satisfy the schema`, !!valid, `${item.name} ${item.arguments} ${JSON.stringify(validators[item.name]?.errors)}`);
    outputs.push({ type: 'function_call_output', call_id: item.call_id, output: JSON.stringify((CANNED[item.name] ?? (() => ({})))(args)) });
  }
  return outputs;
}

// checkUsage checks a response's usage object.
function checkUsage(how, usage) {
  check(`${how}: usage`, !!usage && usage.input_tokens > 0 && usage.output_tokens > 0 &&
    usage.total_tokens === usage.input_tokens + usage.output_tokens &&
    typeof usage.input_tokens_details?.cached_tokens === 'number' &&
    typeof usage.output_tokens_details?.reasoning_tokens === 'number', JSON.stringify(usage));
}

// finalText is the text of a response's message, '' without one.
function finalText(response) {
  return response.output.filter((i) => i.type === 'message').flatMap((m) => m.content).filter((c) => c.type === 'output_text').map((c) => c.text).join('');
}

// streamed runs the task with responses.stream, continuing each response by its id.
async function streamed(client, model) {
  let input = TASK, previous, calls = 0, requests = 0, text = '';
  for (let step = 0; step < MAX_STEPS; step++) {
    const stream = client.responses.stream({
      model, instructions: INSTRUCTIONS, input, tools: TOOLS, previous_response_id: previous,
      reasoning: { effort: 'minimal', summary: 'auto' },
    });
    const types = [];
    let deltas = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') deltas += event.delta;
    }
    const response = await stream.finalResponse();
    requests++;
    check('stream: response.created first', types[0] === 'response.created', types[0]);
    check('stream: response.completed last', types.at(-1) === 'response.completed', types.at(-1));
    check('stream: sequence of item events', types.includes('response.output_item.added') && types.includes('response.output_item.done'), types.join(','));
    checkUsage('stream', response.usage);
    const outputs = answer(response, 'stream');
    calls += outputs.length;
    if (outputs.length === 0) {
      text = finalText(response);
      check('stream: the text deltas spell the message', deltas === text, `${deltas} / ${text}`);
      break;
    }
    input = outputs;
    previous = response.id;
  }
  return { calls, requests, text };
}

// whole runs the task with responses.create, sending the whole input back each time.
async function whole(client, model) {
  const input = [{ role: 'user', content: [{ type: 'input_text', text: TASK }] }];
  let calls = 0, requests = 0, text = '';
  for (let step = 0; step < MAX_STEPS; step++) {
    const response = await client.responses.create({ model, instructions: INSTRUCTIONS, input, tools: TOOLS, store: false });
    requests++;
    check('create: status completed', response.status === 'completed', response.status);
    checkUsage('create', response.usage);
    const outputs = answer(response, 'create');
    calls += outputs.length;
    if (outputs.length === 0) {
      text = finalText(response);
      break;
    }
    input.push(...response.output, ...outputs);
  }
  return { calls, requests, text };
}

async function main() {
  const base = baseURL();
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'agentsim', maxRetries: 0, timeout: 120_000 });
  const model = await servedModel(base);
  const started = Date.now();
  const s = await streamed(client, model);
  const w = await whole(client, model);
  check('stream: tool calls, then a final message', s.calls >= 1 && s.text.length > 0, JSON.stringify(s));
  check('create: tool calls, then a final message', w.calls >= 1 && w.text.length > 0, JSON.stringify(w));
  const failed = checks.filter((c) => !c.ok);
  report({
    ok: failed.length === 0,
    client: 'openai (responses)',
    tool_calls: s.calls,
    final_answer: s.text.length > 0,
    requests: s.requests + w.requests,
    non_streamed_tool_calls: w.calls,
    checks: checks.length,
    checks_failed: failed,
    wall_ms: Date.now() - started,
  });
}

main().catch((err) => fail(`${err.name}: ${err.message}`));
