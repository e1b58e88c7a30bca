// Drives a running mnemo server with the JavaScript SDK, as a web front-end
// (e.g. LangChain's agent-chat-ui) does: the user token as the SDK's apiKey
// (sent as X-Api-Key), a thread, a streamed run (values + messages-tuple), the
// thread's history, the user's threads found by metadata, the user's memory
// read through the store API.
// tests/e2e/test_js_sdk.py starts the server and runs this script:
//   MNEMO_URL=http://127.0.0.1:2024 MNEMO_TOKEN=<user token> MNEMO_USER=<its user> node sdk_smoke.mjs
// It prints one JSON object of what it saw; the test checks it.
import { Client } from "@langchain/langgraph-sdk";

const { MNEMO_URL: apiUrl, MNEMO_TOKEN: token, MNEMO_USER: user, MNEMO_OTHER_USER: other } = process.env;
const client = new Client({ apiUrl, apiKey: token });

async function status(call) {  // the HTTP status a refused call fails with
  try {
    await call();
    return 200;
  } catch (err) {
    return err.status ?? String(err);
  }
}

const thread = await client.threads.create();
let answer = "", chunks = 0, tools = [], last = null;
for await (const { event, data } of client.runs.stream(thread.thread_id, "agent", {
  input: { messages: [{ role: "user", content: "Hi, I'm Ada and I live in Lisbon. Remember that I have a cat." }] },
  streamMode: ["messages-tuple", "values"],
})) {
  if (event === "error") throw new Error(JSON.stringify(data));
  if (event === "values") last = data;
  if (event !== "messages") continue;
  const [chunk, meta] = data;
  if (meta.langgraph_node !== "call_model" || !/^ai/i.test(chunk.type)) continue;
  for (const call of chunk.tool_call_chunks ?? []) if (call.name) tools.push(call.name);
  if (typeof chunk.content === "string" && chunk.content) { answer += chunk.content; chunks += 1; }
}

const profile = await client.store.searchItems([user, "profile"], { limit: 50 });
const notes = await client.store.searchItems([user, "notes"], { limit: 50 });
const history = await client.threads.getHistory(thread.thread_id, { limit: 10 });
// agent-chat-ui lists a user's threads by the graph's id in their metadata.
const listed = await client.threads.search({ metadata: { graph_id: "agent" }, limit: 100 });
// apiKey: null, so no LANGSMITH_API_KEY of the environment is sent instead.
const anonymous = new Client({ apiUrl, apiKey: null });
const report = {
  thread_id: thread.thread_id,
  owner: thread.metadata?.owner ?? null,
  chunks,
  answer,
  tools,
  messages: last?.messages?.length ?? 0,
  profile: Object.fromEntries(profile.items.map((it) => [it.key, it.value.value])),
  notes: notes.items.map((it) => it.value.text),
  threads: (await client.threads.search({ limit: 100 })).map((t) => t.thread_id),
  listed: listed.map((t) => t.thread_id),
  history: history.map((s) => s.values?.messages?.length ?? 0),
  first_said: history[0]?.values?.messages?.[0]?.content ?? null,
  // Refusals: another user's memory, a run claiming another user, no token at all.
  foreign_store: await status(() => client.store.searchItems([other], { limit: 10 })),
  foreign_run: await status(() =>
    client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "hi" }] }, context: { user_id: other } })),
  anonymous: await status(() => anonymous.threads.search({ limit: 1 })),
};
console.log(JSON.stringify(report));
