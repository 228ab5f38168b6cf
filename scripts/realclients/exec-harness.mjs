// A tool-calling harness on the OpenAI Node SDK (package openai) for `agentsim exec`: it reads
// OPENAI_BASE_URL, OPENAI_API_KEY and AGENTSIM_MODEL as exec sets them, and runs one task —
// streamed model calls with a tool, each call's result sent back, until the model answers
// without a tool call — with the SDK's own timeout and retries. Optionally an idle timeout of
// its own ends a stream silent that long and re-sends the same messages, as harnesses do.
//
//   agentsim exec --agents 4 -- node exec-harness.mjs [--idle-timeout-ms N] [--retries N]
//
// It prints "done after N model calls" and exits 0 when the task ends; an error exits 1. Its
// one tool returns canned text: nothing here touches files or runs commands.
import OpenAI from 'openai';

const args = process.argv.slice(2);
function flag(name, dflt) {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
}
const idleMs = flag('--idle-timeout-ms', 0);
const retries = flag('--retries', 2);
const maxCalls = flag('--max-calls', 40);

const client = new OpenAI(); // OPENAI_BASE_URL and OPENAI_API_KEY from the environment
const model = process.env.AGENTSIM_MODEL;
const tools = [{
  type: 'function',
  function: {
    name: 'read_file',
    description: 'Read a file of the repository.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
}];

// stream makes one streamed call and assembles its reply; with idleMs it aborts the stream
// after that long without a chunk.
async function stream(messages) {
  const abort = new AbortController();
  let timer;
  const arm = () => {
    clearTimeout(timer);
    if (idleMs > 0) timer = setTimeout(() => abort.abort(new Error(`idle timeout: no chunk for ${idleMs} ms`)), idleMs);
  };
  arm();
  const reply = { role: 'assistant', content: '', tool_calls: [] };
  try {
    const s = await client.chat.completions.create(
      { model, messages, tools, stream: true, max_tokens: 512 }, { signal: abort.signal, maxRetries: retries });
    for await (const chunk of s) {
      arm();
      for (const ch of chunk.choices) {
        reply.content += ch.delta.content ?? '';
        for (const tc of ch.delta.tool_calls ?? []) {
          const c = reply.tool_calls[tc.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
          if (tc.id) c.id = tc.id;
          if (tc.function?.name && !c.function.name) c.function.name = tc.function.name;
          c.function.arguments += tc.function?.arguments ?? '';
        }
      }
    }
  } finally {
    clearTimeout(timer);
  }
  if (reply.tool_calls.length === 0) delete reply.tool_calls;
  return reply;
}

// call re-sends the messages after an idle timeout, up to retries times.
async function call(messages) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await stream(messages);
    } catch (err) {
      if (attempt >= retries || !String(err?.message ?? err).includes('idle timeout') && err?.name !== 'APIUserAbortError') throw err;
      process.stderr.write(`retry ${attempt + 1} after ${err.message}\n`);
    }
  }
}

const messages = [
  { role: 'system', content: 'You are a coding agent. Read files with read_file.' },
  { role: 'user', content: `Agent ${process.env.AGENTSIM_AGENT}: summarise the repository.` },
];
try {
  for (let n = 1; n <= maxCalls; n++) {
    const reply = await call(messages);
    messages.push(reply);
    if (!reply.tool_calls) {
      console.log(`done after ${n} model calls`);
      process.exit(0);
    }
    for (const tc of reply.tool_calls) {
      messages.push({ role: 'tool', tool_call_id: tc.id, content: `contents of ${tc.function.arguments}` });
    }
  }
  console.error(`error: the task did not end in ${maxCalls} model calls`);
  process.exit(1);
} catch (err) {
  console.error(`error: ${err?.message ?? err}`);
  process.exit(1);
}
