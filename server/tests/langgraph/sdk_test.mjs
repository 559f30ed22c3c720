// A LangGraph user's script against a Trellis server, through LangGraph's own JavaScript SDK
// (@langchain/langgraph-sdk). `node sdk_test.mjs URL`: the server runs `examples/support`
// (classify → draft → review → a question before `send`) and its chat (a reply streamed a word
// at a time), paced (`serve --pace 100`).
import { Client } from "@langchain/langgraph-sdk";

const client = new Client({ apiUrl: process.argv[2] });

function check(condition, what) {
  if (!condition) {
    console.error(`FAILED: ${what}`);
    process.exit(1);
  }
  console.log(`ok: ${what}`);
}

async function status(call) {
  try {
    await call();
    return null;
  } catch (error) {
    return error.status ?? error.response?.status ?? String(error);
  }
}

const assistants = await client.assistants.search();
check(assistants.some((a) => a.graph_id === "Support"), "assistants.search lists the graph");
check((await client.assistants.get("Support")).graph_id === "Support", "assistants.get by graph name");
const schemas = await client.assistants.getSchemas((await client.assistants.get("Support")).assistant_id);
check(schemas.state_schema?.title === "Ticket" && schemas.input_schema?.properties?.text,
  "getSchemas: the state's and the input's JSON Schemas");

const thread = await client.threads.create({ metadata: { user: "ada" } });
check(thread.status === "idle", "threads.create");
const paused = await client.runs.wait(thread.thread_id, "Support", {
  input: { text: "I was charged twice on my invoice" },
});
check(paused.__interrupt__?.[0]?.id, "runs.wait stops at the question, with __interrupt__");
const state = await client.threads.getState(thread.thread_id);
check(JSON.stringify(state.next) === JSON.stringify(["send"]), "getState: next is the node asked about");
check(state.tasks[0].name === "send" && state.interrupts.length === 1, "getState: tasks and interrupts");

const done = await client.runs.wait(thread.thread_id, "Support", { command: { resume: "approve" } });
check(done.sent.length === 1 && !("__interrupt__" in done), "a command resume runs to the end");

const again = await client.runs.wait(thread.thread_id, "Support", {
  input: { text: "thanks, and a general question" },
});
check(again.drafts > done.drafts && again.category === "general", "a second run continues the thread's state");

const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
check(history.length > 6 && history[0].parent_checkpoint.checkpoint_id === history[1].checkpoint.checkpoint_id,
  "getHistory: newest first, each naming its parent");

// Time travel: updateState, a run with no input to take the edit up, a fork from a checkpoint.
const edited = (await client.threads.create()).thread_id;
await client.runs.wait(edited, "Support", { input: { text: "I was charged twice on my invoice" } });
const edit = await client.threads.updateState(edited, {
  values: { category: "general" },
  asNode: "classify",
});
const editedState = await client.threads.getState(edited);
check(editedState.checkpoint.checkpoint_id === edit.checkpoint.checkpoint_id
  && JSON.stringify(editedState.next) === JSON.stringify(["draft"]),
  "updateState: the edit is the thread's state, its next what it leads to");
const taken = await client.runs.wait(edited, "Support", { input: null });
check(taken.category === "general" && taken.__interrupt__?.length === 1,
  "a run with no input takes the edit up");
const editedHistory = await client.threads.getHistory(edited, { limit: 100 });
const start = editedHistory.find((h) => JSON.stringify(h.next) === JSON.stringify(["classify"]));
const forked = await client.runs.wait(edited, "Support", {
  input: null,
  checkpointId: start.checkpoint.checkpoint_id,
});
check(forked.category === "billing" && forked.invoice, "a run from a checkpoint forks there");

const copied = await client.threads.copy(edited);
check(copied.thread_id !== edited
  && JSON.stringify((await client.threads.getState(copied.thread_id)).values)
    === JSON.stringify((await client.threads.getState(edited)).values),
  "threads.copy: a new thread with the same state");
await client.threads.delete(edited);
check((await status(() => client.threads.get(edited))) === 404, "threads.delete: the thread is gone");

// A stream: metadata first, updates by node, the question, end.
const streamed = await client.threads.create();
const parts = [];
for await (const part of client.runs.stream(streamed.thread_id, "Support", {
  input: { text: "charged twice on my invoice" },
  streamMode: ["values", "updates"],
})) {
  parts.push(part);
}
const kinds = parts.map((p) => p.event);
check(kinds[0] === "metadata", `a stream opens with metadata (${kinds})`);
const updates = parts.filter((p) => p.event === "updates").map((p) => p.data);
check(Object.keys(updates[0])[0] === "classify", "updates: named by node, as each runs");
check(updates[updates.length - 1].__interrupt__?.length === 1, "updates: the question");

// Breakpoints at run creation: paused before `draft`, then on past it with no input.
const stops = await client.threads.create();
const halted = await client.runs.wait(stops.thread_id, "Support", {
  input: { text: "charged twice" },
  interruptBefore: ["draft"],
});
check(!halted.drafts && halted.__interrupt__?.length === 1, "interruptBefore: the run pauses before draft");
const wentOn = await client.runs.wait(stops.thread_id, "Support", { input: null });
check(wentOn.drafts >= 1 && wentOn.__interrupt__?.[0]?.id !== halted.__interrupt__[0].id,
  "a run with no input goes on past the breakpoint");

// Double-texting: reject, then interrupt.
const busy = await client.threads.create();
const first = await client.runs.create(busy.thread_id, "Support", { input: { text: "slow" } });
check((await status(() => client.runs.create(busy.thread_id, "Support", {
  input: { text: "again" },
  multitaskStrategy: "reject",
}))) === 409, "reject: a run on a busy thread is a 409");
await client.runs.create(busy.thread_id, "Support", {
  input: { text: "instead" },
  multitaskStrategy: "interrupt",
});
check((await client.runs.get(busy.thread_id, first.run_id)).status === "interrupted",
  "interrupt: the running run is stopped");

// The support chat: its reply streamed a word at a time, the conversation kept on the thread.
const chat = await client.threads.create();
const pieces = [];
for await (const part of client.runs.stream(chat.thread_id, "Chat", {
  input: { messages: [{ type: "human", content: "I was charged twice on my invoice" }] },
  streamMode: "messages-tuple",
})) {
  if (part.event === "messages") pieces.push(part.data);
}
const kept = (await client.threads.getState(chat.thread_id)).values.messages;
check(pieces.length > 5 && pieces.every(([m]) => m.type === "AIMessageChunk" && m.id === kept.at(-1).id),
  "messages-tuple: the reply's pieces, under the id of the message kept");
check(pieces.map(([m]) => m.content).join("") === kept.at(-1).content, "the pieces join to the reply");
const continued = await client.runs.wait(chat.thread_id, "Chat", {
  input: { messages: [{ role: "user", content: "When will I see it?" }] },
});
check(continued.messages.length === 4 && continued.messages.at(-1).content.includes("Message 2 of this conversation"),
  "a second message continues the conversation");

check((await status(() => client.threads.get("2f9c1c4e-4b1a-4f53-9d4e-0c6f1e2a7b10"))) === 404,
  "an unknown thread is a 404");
console.log("all LangGraph JavaScript SDK checks passed");
