// One chat turn through mnemo as a Node front end makes it, streamed: list the models first (as chat
// front ends do before the first message), then stream the answer to MESSAGE in session SESSION.
// CLIENT: "openai" (the openai package) or "ai-sdk" (the Vercel AI SDK: `ai` + `@ai-sdk/openai`).
// Prints one JSON line: {"models": [...], "model": "...", "pieces": n, "text": "..."}.
import OpenAI from "openai";
import { createOpenAI } from "@ai-sdk/openai";
import { streamText } from "ai";

const { MNEMO_URL, MNEMO_TOKEN, CLIENT, SESSION, MESSAGE } = process.env;
const baseURL = `${MNEMO_URL}/v1`;
const headers = { "X-Session-Id": SESSION };

async function openaiTurn() {
  const client = new OpenAI({ baseURL, apiKey: MNEMO_TOKEN, defaultHeaders: headers, maxRetries: 0 });
  const models = [];
  for await (const m of client.models.list()) models.push(m.id);
  const stream = await client.chat.completions.create({
    model: models[0],
    messages: [{ role: "user", content: MESSAGE }],
    stream: true,
  });
  let text = "";
  let pieces = 0;
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta?.content ?? "";
    if (delta) pieces += 1;
    text += delta;
  }
  return { models, model: models[0], pieces, text };
}

async function aiSdkTurn() {
  // the AI SDK has no model list: a front end reads /v1/models itself
  const listed = await fetch(`${baseURL}/models`, { headers: { Authorization: `Bearer ${MNEMO_TOKEN}` } });
  if (!listed.ok) throw new Error(`GET /v1/models: ${listed.status} ${await listed.text()}`);
  const models = (await listed.json()).data.map((m) => m.id);
  const provider = createOpenAI({ baseURL, apiKey: MNEMO_TOKEN, headers });
  const result = streamText({ model: provider.chat(models[0]), prompt: MESSAGE, maxRetries: 0 });
  let text = "";
  let pieces = 0;
  for await (const delta of result.textStream) {
    if (delta) pieces += 1;
    text += delta;
  }
  return { models, model: models[0], pieces, text };
}

const turns = { openai: openaiTurn, "ai-sdk": aiSdkTurn };
if (!turns[CLIENT]) throw new Error(`CLIENT must be one of ${Object.keys(turns)}`);
process.stdout.write(`${JSON.stringify(await turns[CLIENT]())}\n`);
