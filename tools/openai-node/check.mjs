// Runs the official OpenAI Node client against `llmbench serve` (base URL in argv[2],
// model id in argv[3]; the server runs with --max-body 65536). Prints one "ok NAME" line
// per check and exits non-zero at the first failure. Installed by .ci/run:
//   npm install --prefix tools/openai-node --no-save --no-package-lock openai@5
import OpenAI from "openai";

const [base, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL: base + "/v1", apiKey: "none", maxRetries: 0, timeout: 30000 });

function check(name, cond, detail) {
  if (!cond) {
    console.error(`FAIL ${name}: ${JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok ${name}`);
}

async function expectError(name, fn, cls, status) {
  try {
    await fn();
  } catch (e) {
    check(name, e instanceof cls && e.status === status && typeof e.message === "string", { cls: e?.constructor?.name, status: e?.status, message: e?.message });
    return;
  }
  check(name, false, "no error");
}

const list = await client.models.list();
check("models.list", list.data.length === 1 && list.data[0].id === model, list.data);
const m = await client.models.retrieve(model);
check("models.retrieve", m.id === model && m.object === "model", m);
await expectError("models.retrieve unknown", () => client.models.retrieve("no-such-model"), OpenAI.NotFoundError, 404);

const c = await client.completions.create({ model, prompt: ["Once upon a time", "The cat"], n: 2, max_tokens: 5, logprobs: 2, seed: 1 });
check("completions array n=2 logprobs", c.choices.length === 4 && c.choices.every((ch, i) => ch.index === i && ch.logprobs.tokens.length === ch.logprobs.token_logprobs.length && ch.logprobs.tokens.length > 0) && c.usage.completion_tokens > 0, c);

const stream = await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 5, stream: true, n: 2, logprobs: 1 });
const texts = ["", ""];
let finishes = 0;
for await (const chunk of stream) {
  for (const ch of chunk.choices) {
    texts[ch.index] += ch.text;
    if (ch.finish_reason) finishes++;
  }
}
check("completions stream n=2", finishes === 2 && texts.every((t) => t.length > 0), texts);

const chat = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Hello" }], max_tokens: 5, logprobs: true, top_logprobs: 2 });
check("chat", chat.choices[0].message.role === "assistant" && chat.choices[0].logprobs.content.length === chat.usage.completion_tokens, chat);

const cs = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Hello" }], max_tokens: 5, stream: true, stream_options: { include_usage: true }, logprobs: true, top_logprobs: 1 });
let content = "", entries = 0, usage = null;
for await (const chunk of cs) {
  if (chunk.usage) usage = chunk.usage;
  for (const ch of chunk.choices) {
    content += ch.delta?.content ?? "";
    entries += ch.logprobs?.content?.length ?? 0;
  }
}
check("chat stream include_usage logprobs", usage && usage.completion_tokens === entries && entries > 0 && content.length > 0, { usage, entries, content });

await expectError("bad model", () => client.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "x" }] }), OpenAI.NotFoundError, 404);
await expectError("bad body", () => client.completions.create({ model, prompt: "x", max_tokens: -1 }), OpenAI.BadRequestError, 400);
await expectError("oversized body", () => client.completions.create({ model, prompt: "x".repeat(70000), max_tokens: 1 }), OpenAI.APIError, 413);
console.log("all ok");
