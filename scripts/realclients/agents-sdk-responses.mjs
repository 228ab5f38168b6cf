// The OpenAI Agents SDK for JS (@openai/agents), unmodified, in its default Responses mode
// (POST /v1/responses) against agentsim serve: an agent with two function tools and the hosted
// web_search tool runs its loop to a final output, streamed and not, and streamed with a
// reasoning effort and summary. It prints one JSON line: {ok, tool_calls, final_answer, ...}
// and the figures of each run.
//
//   node agents-sdk-responses.mjs http://127.0.0.1:PORT
//
// The tools only return canned results: nothing here touches files, the network beyond the
// loopback simulator, or runs commands.
import OpenAI from 'openai';
import { z } from 'zod';
import { Agent, run, tool, webSearchTool, setDefaultOpenAIClient, setTracingDisabled } from '@openai/agents';
import { baseURL, servedModel, report, fail } from './common.mjs';

const getWeather = tool({
  name: 'get_weather',
  description: 'The current weather in a city.',
  parameters: z.object({ city: z.string().min(1), unit: z.enum(['celsius', 'fahrenheit']) }),
  execute: async ({ city, unit }) => JSON.stringify({ city, temperature: 18, unit, sky: 'cloudy' }),
});

const lookupOrder = tool({
  name: 'lookup_order',
  description: 'Look an order up by its id.',
  parameters: z.object({ order_id: z.string().regex(/^ORD-[0-9]{6}$/), include_items: z.boolean() }),
  execute: async ({ order_id: id, include_items: items }) => JSON.stringify({ order_id: id, status: 'shipped', items: items ? ['mug'] : [] }),
});

// INSTRUCTIONS and TASK open the conversation, as in agents-sdk.mjs: the simulator draws the
// tool steps from the instructions and the task (docs/engine.md §8), so this run takes several
// tool calls within the SDK's default of 10 turns.
const INSTRUCTIONS = 'You are a support agent. Answer with the help of the tools.';
const TASK = 'Check order ORD-654321 and the weather where it ships.';

// MAX_TURNS is the SDK's own default, said aloud: a run that needs more fails (MaxTurnsExceeded).
const MAX_TURNS = 10;

// summarize counts the tool calls and results a run made, and its final output.
function summarize(result, started) {
  const items = result.newItems;
  const calls = items.filter((i) => i.type === 'tool_call_item');
  return {
    tool_calls: calls.length,
    tool_results: items.filter((i) => i.type === 'tool_call_output_item').length,
    tools_called: [...new Set(calls.map((i) => i.rawItem.name))],
    model_calls: result.rawResponses.length,
    final_output: typeof result.finalOutput === 'string' && result.finalOutput.length > 0,
    wall_ms: Date.now() - started,
  };
}

async function main() {
  const base = baseURL();
  setDefaultOpenAIClient(new OpenAI({ baseURL: `${base}/v1`, apiKey: 'agentsim', maxRetries: 0, timeout: 120_000 }));
  setTracingDisabled(true);
  const agent = new Agent({
    name: 'support', instructions: INSTRUCTIONS, model: await servedModel(base),
    tools: [getWeather, lookupOrder, webSearchTool()],
  });

  let started = Date.now();
  const stream = await run(agent, TASK, { stream: true, maxTurns: MAX_TURNS });
  for await (const _ of stream.toTextStream()) { /* drain the stream: the run goes on as it is read */ }
  await stream.completed;
  const streamed = summarize(stream, started);

  started = Date.now();
  const whole = summarize(await run(agent, TASK, { maxTurns: MAX_TURNS }), started);

  started = Date.now();
  const reasoner = agent.clone({ modelSettings: { reasoning: { effort: 'minimal', summary: 'auto' } } });
  const thinking = await run(reasoner, TASK, { stream: true, maxTurns: MAX_TURNS });
  for await (const _ of thinking.toTextStream()) { /* drained as above */ }
  await thinking.completed;
  const reasoning = summarize(thinking, started);

  const runs = [streamed, whole, reasoning];
  const ok = runs.every((r) => r.tool_calls >= 2 && r.tool_results === r.tool_calls && r.final_output &&
    r.tools_called.every((n) => n === 'get_weather' || n === 'lookup_order'));
  report({
    ok, client: '@openai/agents (responses)', tool_calls: streamed.tool_calls, final_answer: streamed.final_output,
    requests: runs.reduce((n, r) => n + r.model_calls, 0), streamed, non_streamed: whole, reasoning,
  });
}

main().catch((err) => fail(`${err.name}: ${err.message}`));
