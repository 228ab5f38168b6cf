// The Vercel AI SDK (ai, with @ai-sdk/openai-compatible, the stack inside opencode), unmodified,
// against agentsim serve: streamText and generateText with two tools run their loop to a final
// text, and streamText once more with a reasoning effort. The SDK stops after one step unless
// told otherwise, so stopWhen allows 20, as its ToolLoopAgent does. It prints one JSON line:
// {ok, tool_calls, final_answer, ...} and the figures of each run.
//
//   node ai-sdk.mjs http://127.0.0.1:PORT
//
// The tools only return canned results: nothing here touches files, the network beyond the
// loopback simulator, or runs commands.
import { streamText, generateText, tool, stepCountIs } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { z } from 'zod';
import { baseURL, servedModel, report, fail } from './common.mjs';

const tools = {
  get_weather: tool({
    description: 'The current weather in a city.',
    inputSchema: z.object({ city: z.string().min(1), unit: z.enum(['celsius', 'fahrenheit']).optional() }),
    execute: async ({ city }) => ({ city, temperature: 18, unit: 'celsius', sky: 'cloudy' }),
  }),
  search_docs: tool({
    description: 'Search the documentation.',
    inputSchema: z.object({
      query: z.string().min(1),
      max_results: z.number().int().min(1).max(10),
      sections: z.array(z.enum(['api', 'guide', 'faq'])).max(3).optional(),
    }),
    execute: async ({ max_results: n }) => ({ hits: [{ title: 'Retries', section: 'guide' }].slice(0, n) }),
  }),
};

// SYSTEM and PROMPT open the conversation. The simulator draws a conversation's tool steps from
// its first messages and its seed (docs/engine.md §8); with agentsim serve's default seed (1)
// this opening draws 5 tool steps before the final text: several tool calls, well within
// stopWhen's 20 steps. The draw does not depend on the reasoning effort, so the run that
// reasons takes as many.
const SYSTEM = 'You are a support assistant. Use the tools to answer.';
const PROMPT = 'Will it rain in Paris tomorrow?';

// MAX_STEPS is stopWhen's bound: without it the SDK stops after the first tool step.
const MAX_STEPS = 20;

// summarize counts the tool calls and results of a run's steps, and its final text.
function summarize(steps, text, started) {
  const calls = steps.flatMap((s) => s.toolCalls);
  return {
    tool_calls: calls.length,
    tool_results: steps.flatMap((s) => s.toolResults).length,
    tools_called: [...new Set(calls.map((c) => c.toolName))],
    steps: steps.length,
    final_finish_reason: steps.at(-1)?.finishReason,
    final_text: text.length > 0,
    reasoning_chars: steps.reduce((n, s) => n + (s.reasoningText ?? '').length, 0),
    wall_ms: Date.now() - started,
  };
}

async function main() {
  const base = baseURL();
  const sim = createOpenAICompatible({ name: 'agentsim', baseURL: `${base}/v1`, apiKey: 'agentsim', includeUsage: true });
  const model = sim(await servedModel(base));
  const params = { model, tools, system: SYSTEM, prompt: PROMPT, stopWhen: stepCountIs(MAX_STEPS), maxRetries: 0 };

  let started = Date.now();
  const stream = streamText(params);
  const streamed = summarize(await stream.steps, await stream.text, started);

  started = Date.now();
  const result = await generateText(params);
  const whole = summarize(result.steps, result.text, started);

  // With a reasoning effort the simulator streams reasoning_content before each reply's calls,
  // and the SDK sends it back in the assistant messages of the next steps.
  started = Date.now();
  const thinking = streamText({ ...params, providerOptions: { agentsim: { reasoningEffort: 'minimal' } } });
  const reasoning = summarize(await thinking.steps, await thinking.text, started);

  const ok = [streamed, whole, reasoning].every((r) => r.tool_calls >= 2 && r.tool_results === r.tool_calls && r.final_text &&
    r.final_finish_reason === 'stop') && reasoning.reasoning_chars > 0;
  report({ ok, client: 'ai', tool_calls: streamed.tool_calls, final_answer: streamed.final_text, streamed, non_streamed: whole, reasoning });
}

main().catch((err) => fail(`${err.name}: ${err.message}`));
