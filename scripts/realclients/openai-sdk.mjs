// The OpenAI Node SDK (package openai) drives tool conversations against agentsim serve and
// checks what docs/engine.md §8 promises of the wire: every streamed tool-call delta's shape,
// finish_reason "tool_calls", the usage chunk, arguments that satisfy their tool's JSON Schema,
// tool_choice none / required / named, parallel_tool_calls false, and the same loop without
// streaming. It prints one JSON line: {ok, checks: [{name, ok, detail}], ...figures}.
//
//   node openai-sdk.mjs http://127.0.0.1:PORT
//
// The tools only return canned results: nothing here touches files, the network beyond the
// loopback simulator, or runs commands.
import OpenAI from 'openai';
import Ajv from 'ajv';
import { baseURL, servedModel, report, fail } from './common.mjs';

// TOOLS are three harmless function tools whose schemas use what agent harnesses send:
// required, enum, pattern, bounds, nested objects, arrays, additionalProperties and $schema.
const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The current weather in a city.',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', minLength: 1, description: 'the city' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        },
        required: ['city'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'lookup_order',
      description: 'Look an order up by its id.',
      parameters: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: {
          order_id: { type: 'string', pattern: '^ORD-[0-9]{6}$' },
          include_items: { type: 'boolean' },
          shipping: {
            type: 'object',
            properties: {
              carrier: { type: 'string', enum: ['ups', 'dhl', 'post'] },
              express: { type: 'boolean' },
            },
            required: ['carrier'],
            additionalProperties: false,
          },
        },
        required: ['order_id', 'include_items'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'search_docs',
      description: 'Search the documentation.',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', minLength: 1, maxLength: 200 },
          max_results: { type: 'integer', minimum: 1, maximum: 10 },
          sections: {
            type: 'array',
            items: { type: 'string', enum: ['api', 'guide', 'faq'] },
            minItems: 1,
            maxItems: 3,
            uniqueItems: true,
          },
        },
        required: ['query', 'max_results'],
        additionalProperties: false,
      },
    },
  },
];

// CANNED are the tools' results: fixed text, whatever the arguments.
const CANNED = {
  get_weather: () => ({ temperature: 18, unit: 'celsius', sky: 'cloudy' }),
  lookup_order: (args) => ({ order_id: args.order_id, status: 'shipped', items: args.include_items ? ['mug'] : [] }),
  search_docs: (args) => ({ hits: [{ title: 'Getting started', section: 'guide' }].slice(0, args.max_results) }),
};

// MAX_STEPS bounds a loop: the simulator draws at most a few dozen steps (docs/engine.md §8).
const MAX_STEPS = 60;

const SYSTEM = 'You are a support assistant. Use the tools to answer.';

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = Object.fromEntries(TOOLS.map((t) => [t.function.name, ajv.compile(t.function.parameters)]));
const offered = new Set(TOOLS.map((t) => t.function.name));

const checks = [];

// check records one named check; detail says what was seen when it failed.
function check(name, ok, detail = '') {
  checks.push(ok ? { name, ok } : { name, ok, detail });
  return ok;
}

// conversation is the opening of a conversation whose user message is prompt.
function conversation(prompt) {
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: prompt },
  ];
}

// streamReply streams one reply and checks its deltas; it returns the calls assembled (in
// index order), the content, the finish reason and the usage, and the problems seen.
async function streamReply(client, params) {
  const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
  const calls = [];
  const problems = [];
  let content = '';
  let finish = null;
  let usage = null;
  let chunksAfterUsage = 0;
  for await (const chunk of stream) {
    if (usage) chunksAfterUsage++;
    if (chunk.usage) {
      usage = chunk.usage;
      if (chunk.choices.length !== 0) problems.push(`usage chunk has ${chunk.choices.length} choices`);
    }
    for (const choice of chunk.choices) {
      const delta = choice.delta ?? {};
      if (typeof delta.content === 'string') content += delta.content;
      for (const tc of delta.tool_calls ?? []) problems.push(...deltaProblems(tc, calls));
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  if (chunksAfterUsage) problems.push(`${chunksAfterUsage} chunks after the usage chunk`);
  return { calls: calls.filter(Boolean), content, finish, usage, problems };
}

// deltaProblems checks one tool-call delta against OpenAI's shape and folds it into calls: a
// call's first delta carries index, id, type "function", function.name and arguments "";
// later ones carry only index and an argument piece.
function deltaProblems(tc, calls) {
  const shape = JSON.stringify(tc);
  if (!Number.isInteger(tc.index)) return [`delta without an integer index: ${shape}`];
  const call = calls[tc.index];
  if (!call) {
    const first = typeof tc.id === 'string' && tc.id !== '' && tc.type === 'function' &&
      offered.has(tc.function?.name) && tc.function?.arguments === '';
    calls[tc.index] = { id: tc.id, name: tc.function?.name, arguments: tc.function?.arguments ?? '' };
    return first ? [] : [`first delta of call ${tc.index} lacks index, id, type "function", an offered name or arguments "": ${shape}`];
  }
  if (typeof tc.function?.arguments === 'string') call.arguments += tc.function.arguments;
  const extra = Object.keys(tc).filter((k) => k !== 'index' && k !== 'function');
  const fnExtra = Object.keys(tc.function ?? {}).filter((k) => k !== 'arguments');
  if (typeof tc.function?.arguments !== 'string' || extra.length || fnExtra.length) {
    return [`later delta of call ${tc.index} carries more than index and an argument piece: ${shape}`];
  }
  return [];
}

// argumentProblems parses each call's arguments and validates them against the tool's schema.
function argumentProblems(calls) {
  const problems = [];
  for (const c of calls) {
    let args;
    try {
      args = JSON.parse(c.arguments);
    } catch (err) {
      problems.push(`${c.name}: arguments ${JSON.stringify(c.arguments)} are not JSON: ${err.message}`);
      continue;
    }
    const validate = validators[c.name];
    if (!validate) problems.push(`call of ${JSON.stringify(c.name)}, which was not offered`);
    else if (!validate(args)) problems.push(`${c.name}(${c.arguments}): ${ajv.errorsText(validate.errors)}`);
  }
  return problems;
}

// usageProblems checks a usage object: prompt and completion tokens, and their total.
function usageProblems(usage) {
  if (!usage) return ['no usage'];
  const { prompt_tokens: p, completion_tokens: c, total_tokens: t } = usage;
  return p > 0 && c > 0 && t === p + c ? [] : [`usage ${JSON.stringify(usage)}`];
}

// wholeReply asks for one reply without streaming and checks message.tool_calls.
async function wholeReply(client, params) {
  const res = await client.chat.completions.create({ ...params, stream: false });
  const choice = res.choices[0];
  const msg = choice.message;
  const problems = [...usageProblems(res.usage)];
  const calls = (msg.tool_calls ?? []).map((tc) => {
    if (typeof tc.id !== 'string' || tc.id === '' || tc.type !== 'function' || !offered.has(tc.function?.name) ||
      typeof tc.function?.arguments !== 'string') {
      problems.push(`tool call ${JSON.stringify(tc)} lacks an id, type "function", an offered name or string arguments`);
    }
    return { id: tc.id, name: tc.function?.name, arguments: tc.function?.arguments ?? '' };
  });
  if (calls.length && msg.content !== null) problems.push(`message.content ${JSON.stringify(msg.content)} beside tool_calls; want null`);
  return { calls, content: msg.content ?? '', finish: choice.finish_reason, usage: res.usage, problems };
}

// loop runs a conversation to its final answer: each reply's calls are checked, run (canned),
// and answered with one tool message per call, until a reply without a call.
async function loop(client, model, { stream, prompt, extra = {} }) {
  const messages = conversation(prompt);
  const problems = [];
  let steps = 0;
  let calls = 0;
  let maxPerReply = 0;
  for (let i = 0; i < MAX_STEPS; i++) {
    const params = { model, messages, tools: TOOLS, ...extra };
    const reply = stream ? await streamReply(client, params) : await wholeReply(client, params);
    problems.push(...reply.problems, ...(stream ? usageProblems(reply.usage) : []));
    if (reply.calls.length === 0) {
      if (reply.finish !== 'stop') problems.push(`final reply finish_reason ${reply.finish}; want stop`);
      return { steps, calls, maxPerReply, final: reply.content, problems };
    }
    if (reply.finish !== 'tool_calls') problems.push(`reply with calls finish_reason ${reply.finish}; want tool_calls`);
    const bad = argumentProblems(reply.calls);
    if (bad.length) return { steps, calls, maxPerReply, final: '', problems: [...problems, ...bad] };
    if (new Set(reply.calls.map((c) => c.id)).size !== reply.calls.length) problems.push('two calls of one reply share an id');
    steps++;
    calls += reply.calls.length;
    maxPerReply = Math.max(maxPerReply, reply.calls.length);
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: reply.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    });
    for (const c of reply.calls) {
      messages.push({ role: 'tool', tool_call_id: c.id, content: JSON.stringify(CANNED[c.name](JSON.parse(c.arguments))) });
    }
  }
  problems.push(`no final answer after ${MAX_STEPS} steps`);
  return { steps, calls, maxPerReply, final: '', problems };
}

// checkLoop records the checks of a loop's result r under name.
function checkLoop(name, r) {
  check(`${name}: deltas, finish reasons, usage and arguments`, r.problems.length === 0, r.problems.slice(0, 5).join('; '));
  check(`${name}: at least one tool step`, r.steps >= 1, `${r.steps} steps`);
  check(`${name}: a final answer`, r.final.length > 0, JSON.stringify(r.final));
}

// choiceReplies asks for the first reply of the conversation prompt opens twice, with
// tool_choice required: with parallel calls allowed and with parallel_tool_calls false.
async function choiceReplies(client, model, prompt) {
  const messages = conversation(prompt);
  const [required, one] = await Promise.all([
    streamReply(client, { model, messages, tools: TOOLS, tool_choice: 'required' }),
    streamReply(client, { model, messages, tools: TOOLS, tool_choice: 'required', parallel_tool_calls: false }),
  ]);
  return { prompt, required, one };
}

// LOOP_PROMPT opens the main conversation. The simulator draws a conversation's tool steps from
// its first messages and its seed (docs/engine.md §8); with agentsim serve's default seed (1)
// this opening draws 4, enough to see several steps and few enough to stay quick at speedup 1.
const LOOP_PROMPT = 'Where is my order ORD-123456?';

// CHOICE_PROMPTS open the conversations that test tool_choice and parallel_tool_calls, each
// a first request: different prompts draw different calls.
const CHOICE_PROMPTS = Array.from({ length: 12 }, (_, i) => `Question ${i + 1}: what do the docs say about retries?`);

async function main() {
  const base = baseURL();
  const started = Date.now();
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'agentsim', maxRetries: 0, timeout: 120_000 });
  const model = await servedModel(base);

  // The conversations are independent, so they run at once, as a harness's agents do: the
  // simulator batches them, and the checks take about as long as the longest loop.
  const [streamed, whole, serial, none, choices, named, namedWhole, helper] = await Promise.all([
    loop(client, model, { stream: true, prompt: LOOP_PROMPT }),
    loop(client, model, { stream: false, prompt: LOOP_PROMPT }),
    loop(client, model, { stream: true, prompt: LOOP_PROMPT, extra: { parallel_tool_calls: false } }),
    streamReply(client, { model, messages: conversation(CHOICE_PROMPTS[0]), tools: TOOLS, tool_choice: 'none' }),
    Promise.all(CHOICE_PROMPTS.map((prompt) => choiceReplies(client, model, prompt))),
    streamReply(client, {
      model, messages: conversation(CHOICE_PROMPTS[1]), tools: TOOLS, tool_choice: { type: 'function', function: { name: 'lookup_order' } },
    }),
    wholeReply(client, {
      model, messages: conversation(CHOICE_PROMPTS[1]), tools: TOOLS, tool_choice: { type: 'function', function: { name: 'search_docs' } },
    }),
    runToolsHelper(client, model),
  ]);

  checkLoop('streamed loop', streamed);
  checkLoop('non-streamed loop', whole);
  check('non-streamed loop takes the steps the streamed one took', whole.steps === streamed.steps,
    `${whole.steps} steps; streamed ${streamed.steps}`);
  checkLoop('loop with parallel_tool_calls false', serial);
  check('parallel_tool_calls false: at most one call per reply in the loop', serial.maxPerReply <= 1, `${serial.maxPerReply} calls in one reply`);

  check('tool_choice none: text, no call', none.calls.length === 0 && none.finish === 'stop' && none.content.length > 0,
    `${none.calls.length} calls, finish ${none.finish}`);
  for (const { prompt, required, one } of choices) {
    const problems = required.problems.concat(argumentProblems(required.calls));
    check(`tool_choice required (${prompt.slice(0, 11)}): calls`,
      required.calls.length >= 1 && required.finish === 'tool_calls' && problems.length === 0,
      `${required.calls.length} calls, finish ${required.finish}; ${problems.join('; ')}`);
    check(`parallel_tool_calls false (${prompt.slice(0, 11)}): one call`, one.calls.length === 1, `${one.calls.length} calls`);
  }
  check('tool_choice named lookup_order: calls that tool',
    named.calls.length >= 1 && named.calls.every((c) => c.name === 'lookup_order') && named.finish === 'tool_calls' &&
    argumentProblems(named.calls).length === 0,
    `calls ${JSON.stringify(named.calls.map((c) => c.name))}, finish ${named.finish}`);
  check('tool_choice named search_docs, non-streamed: calls that tool',
    namedWhole.calls.length >= 1 && namedWhole.calls.every((c) => c.name === 'search_docs') && namedWhole.finish === 'tool_calls',
    `calls ${JSON.stringify(namedWhole.calls.map((c) => c.name))}, finish ${namedWhole.finish}`);
  check('runTools helper: a final answer after tool calls', helper.calls >= 1 && helper.final.length > 0,
    `${helper.calls} calls, final ${JSON.stringify(helper.final)}`);

  report({
    ok: checks.every((c) => c.ok),
    client: 'openai',
    model,
    tool_calls: streamed.calls,
    tool_steps: streamed.steps,
    non_streamed_tool_calls: whole.calls,
    final_answer: streamed.final.length > 0,
    required_max_calls_per_reply: Math.max(...choices.map((c) => c.required.calls.length)),
    serial_max_calls_per_reply: Math.max(...choices.map((c) => c.one.calls.length)),
    run_tools_calls: helper.calls,
    checks_passed: checks.filter((c) => c.ok).length,
    checks_failed: checks.filter((c) => !c.ok),
    wall_ms: Date.now() - started,
  });
}

// runToolsHelper runs the SDK's own tool loop (chat.completions.runTools), which assembles the
// streamed deltas itself, to its final content.
async function runToolsHelper(client, model) {
  let calls = 0;
  const tools = TOOLS.map((t) => ({
    type: 'function',
    function: {
      ...t.function,
      parse: JSON.parse,
      function: (args) => {
        calls++;
        return JSON.stringify(CANNED[t.function.name](args));
      },
    },
  }));
  const runner = client.chat.completions.runTools({
    model, messages: conversation(LOOP_PROMPT), tools, stream: true, stream_options: { include_usage: true },
  }, { maxChatCompletions: MAX_STEPS });
  const final = (await runner.finalContent()) ?? '';
  return { calls, final };
}

main().catch((err) => fail(`${err.name}: ${err.message}`));
