"""A LangGraph user's script against a Trellis server, through LangGraph's own Python SDK.

`python sdk_test.py URL`: the server runs `examples/support` (classify → draft → review → a
question before `send`) and its chat (a conversation on a thread, a reply streamed a word at a
time, a `lookup` subgraph for billing questions). Every call is the SDK's, unchanged; each check says what a user
would see go wrong.
"""

import sys
import uuid

import httpx
from langgraph_sdk import get_sync_client
from langgraph_sdk.schema import Command

URL = sys.argv[1]
client = get_sync_client(url=URL)


def check(condition, what):
    if not condition:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


def refused(call):
    """The status of the HTTP error `call` raises, or None when it succeeds."""
    try:
        call()
        return None
    except httpx.HTTPStatusError as error:
        return error.response.status_code


# Assistants: one per graph, found by search, by id and by the graph's name.
assistants = client.assistants.search()
check(any(a["graph_id"] == "Support" for a in assistants), "assistants.search lists the graph")
support = next(a for a in assistants if a["graph_id"] == "Support")
# LangGraph's own server gives a graph the assistant id uuid5(its namespace, name).
check(
    support["assistant_id"] == str(uuid.uuid5(uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8"), "Support")),
    "the assistant id is the one LangGraph gives the graph",
)
check(client.assistants.get(support["assistant_id"])["graph_id"] == "Support", "assistants.get by id")
check(client.assistants.get("Support")["assistant_id"] == support["assistant_id"], "assistants.get by graph name")
schemas = client.assistants.get_schemas(support["assistant_id"])
check(schemas["state_schema"]["title"] == "Ticket" and "text" in schemas["input_schema"]["properties"],
      "get_schemas: the state's JSON Schema, and the input's (an update of the state)")
graph = client.assistants.get_graph("Support")
check({"__start__", "classify", "send"} <= {n["id"] for n in graph["nodes"]}, "assistants.get_graph draws the nodes")

# A thread: run and wait, pause at the question, read the state, resume with Command.
thread = client.threads.create(metadata={"user": "ada"})
check(thread["status"] == "idle" and thread["metadata"] == {"user": "ada"}, "threads.create")
paused = client.runs.wait(thread["thread_id"], "Support", input={"text": "I was charged twice on my invoice"})
check("__interrupt__" in paused and paused["__interrupt__"][0]["id"], "runs.wait stops at the question, with __interrupt__")
check(paused["category"] == "billing" and paused["drafts"] >= 1, "runs.wait answers the state so far")
state = client.threads.get_state(thread["thread_id"])
check(state["next"] == ["send"], f"get_state: next is the node asked about ({state['next']})")
check(len(state["interrupts"]) == 1 and state["tasks"][0]["name"] == "send", "get_state: interrupts and tasks")
check(client.threads.get(thread["thread_id"])["status"] == "interrupted", "the thread is interrupted")

done = client.runs.wait(thread["thread_id"], "Support", command=Command(resume="approve"))
check(len(done["sent"]) == 1 and "__interrupt__" not in done, "Command(resume=...) answers and runs to the end")
check(client.threads.get(thread["thread_id"])["status"] == "idle", "the thread is idle again")

# The same thread, a second input: the state carries on (drafts sum, sent appends).
again = client.runs.wait(thread["thread_id"], "Support", input={"text": "thanks, and a general question"})
check(again["drafts"] > done["drafts"] and again["category"] == "general", "a second run continues the thread's state")
client.runs.wait(thread["thread_id"], "Support", command=Command(resume="approve"))
final = client.threads.get_state(thread["thread_id"])
check(len(final["values"]["sent"]) == 2, "two replies sent on one thread")

history = client.threads.get_history(thread["thread_id"], limit=100)
check(len(history) > 6 and history[0]["checkpoint"]["checkpoint_id"] == final["checkpoint"]["checkpoint_id"],
      "get_history lists the thread's checkpoints, newest first")
check(history[0]["parent_checkpoint"]["checkpoint_id"] == history[1]["checkpoint"]["checkpoint_id"],
      "each state names its parent")
older = client.threads.get_history(thread["thread_id"], limit=2, before=history[1]["checkpoint"])
check([h["checkpoint"]["checkpoint_id"] for h in older] == [h["checkpoint"]["checkpoint_id"] for h in history[2:4]],
      "get_history before a checkpoint")

at = client.threads.get_state(thread["thread_id"], checkpoint_id=history[3]["checkpoint"]["checkpoint_id"])
check(at["values"] == history[3]["values"] and at["next"] == history[3]["next"],
      "get_state at a checkpoint of the history")

runs = client.runs.list(thread["thread_id"])
check(len(runs) == 2 and all(r["status"] == "success" for r in runs), "runs.list: the thread's two runs")
check(client.runs.get(thread["thread_id"], runs[0]["run_id"])["run_id"] == runs[0]["run_id"], "runs.get")
joined = client.runs.join(thread["thread_id"], runs[0]["run_id"])
check(len(joined["sent"]) == 2, "runs.join answers the run's outcome")

# Streams: metadata first, the modes' parts as the run goes, what it asks at a pause, end last.
streamed = client.threads.create()["thread_id"]
parts = list(client.runs.stream(streamed, "Support", input={"text": "charged twice on my invoice"},
                                stream_mode=["values", "updates"]))
kinds = [part.event for part in parts]
check(kinds[0] == "metadata" and kinds[-1] == "end", f"a stream opens with metadata and ends with end ({kinds})")
updates = [part.data for part in parts if part.event == "updates"]
check([next(iter(u)) for u in updates[:3]] == ["classify", "lookup_invoice", "draft"],
      "updates: each node's update, as it runs, named by node")
check(updates[-1].get("__interrupt__") and updates[-1]["__interrupt__"][0]["id"],
      "updates: the question as {'__interrupt__': [...]}")
values = [part.data for part in parts if part.event == "values"]
check(values[0]["text"] == "charged twice on my invoice" and "__interrupt__" in values[-1],
      "values: the state from the input on, the last with the question")
resumed = list(client.runs.stream(streamed, "Support", command=Command(resume="approve"), stream_mode="updates"))
check(any("send" in part.data for part in resumed if part.event == "updates"),
      "a streamed Command(resume=...) runs `send`")
check(len(client.threads.get_state(streamed)["values"]["sent"]) == 1, "the streamed run sent its reply")
chain = [part.data for part in client.runs.stream(None, "Support", input={"text": "where is my invoice?"},
                                                   stream_mode="events") if part.event == "events"]
check(chain[0]["event"] == "on_chain_start" and chain[0]["name"] == "Support"
      and any(e["event"] == "on_chain_end" and e["name"] == "classify" for e in chain),
      "events: LangChain's chain events, the graph's and each node's")
check(refused(lambda: list(client.runs.stream(streamed, "Support", input={}, stream_mode="tools"))) == 422,
      "a stream mode not streamed yet is a 422")
watched = client.threads.create()["thread_id"]
parts = list(client.runs.stream(watched, "Support", input={"text": "charged twice on my invoice"},
                                stream_mode=["tasks", "checkpoints", "debug"]))
tasks = [p.data for p in parts if p.event == "tasks"]
check(tasks[0]["name"] == "classify" and tasks[0]["input"]["text"] and tasks[1]["result"]["category"] == "billing",
      "tasks: each node's task as it starts (its input), then its result")
checkpoints = [p.data for p in parts if p.event == "checkpoints"]
check(checkpoints[0]["metadata"]["source"] == "start" and checkpoints[-1]["next"] == ["send"]
      and checkpoints[-1]["config"]["configurable"]["checkpoint_id"]
      == client.threads.get_state(watched)["checkpoint"]["checkpoint_id"],
      "checkpoints: each checkpoint as a thread state, the last the question's")
debug = [p.data for p in parts if p.event == "debug"]
check({d["type"] for d in debug} == {"checkpoint", "task", "task_result"}, "debug: checkpoints and tasks, wrapped")

# A run's stream joined again, from the start and after a checkpoint (Last-Event-ID).
joined_run = client.runs.list(streamed)[0]["run_id"]
joined = list(client.runs.join_stream(streamed, joined_run))
check([p.event for p in joined][-1] == "end" and len(joined) > 3, "join_stream replays the run's states")
later = list(client.runs.join_stream(streamed, joined_run, last_event_id="2"))
check(len(later) == len(joined) - 2, "join_stream after Last-Event-ID sends what came after")

# Double-texting. The server paces its nodes (`serve --pace 100`), so a run just created is
# still executing when the next request comes.
def wait_for_question(thread_id):
    for _ in range(200):
        if client.threads.get(thread_id)["status"] == "interrupted":
            return
        __import__("time").sleep(0.05)
    raise SystemExit(f"FAILED: thread {thread_id} never reached its question")


busy = client.threads.create()["thread_id"]
first = client.runs.create(busy, "Support", input={"text": "slow"})
check(client.threads.get(busy)["status"] == "busy", "a thread executing a run is busy")
check(refused(lambda: client.runs.create(busy, "Support", input={"text": "again"},
                                         multitask_strategy="reject")) == 409,
      "reject: a run on a busy thread is a 409")
second = client.runs.create(busy, "Support", input={"text": "instead"}, multitask_strategy="interrupt")
check(client.runs.get(busy, first["run_id"])["status"] == "interrupted",
      "interrupt: the running run is stopped")
wait_for_question(busy)
check(client.threads.get_state(busy)["values"]["text"] == "instead", "interrupt: the new run goes on")

rolled = client.threads.create()["thread_id"]
client.runs.wait(rolled, "Support", input={"text": "first"})
client.runs.wait(rolled, "Support", command=Command(resume="approve"))
before = client.threads.get_state(rolled)["values"]
doomed = client.runs.create(rolled, "Support", input={"text": "an invoice to roll back"})
client.runs.create(rolled, "Support", input={"text": "a general question"}, multitask_strategy="rollback")
wait_for_question(rolled)
after = client.threads.get_state(rolled)["values"]
check(client.runs.get(rolled, doomed["run_id"])["status"] == "interrupted", "rollback: the running run is stopped")
check(after["invoice"] == before["invoice"] and after["category"] == "general",
      "rollback: the new run goes on from before the stopped one")
history = client.threads.get_history(rolled, limit=100)
check(all(h["metadata"]["run_id"] != doomed["run_id"] for h in history),
      "rollback: the stopped run is not in the thread's history")

queued = client.threads.create()["thread_id"]
running = client.runs.create(queued, "Support", input={"text": "first"})
after_it = client.runs.create(queued, "Support", input={"text": "second"}, multitask_strategy="enqueue")
check(client.runs.get(queued, running["run_id"])["status"] == "interrupted"
      and after_it["run_id"] != running["run_id"],
      "enqueue: the new run starts once the running one has stopped at its question")

# Time travel: update_state edits the thread; a run with no input takes the edit up; a run
# from a checkpoint of the history forks there.
edited = client.threads.create()["thread_id"]
first = client.runs.wait(edited, "Support", input={"text": "I was charged twice on my invoice"})
edit = client.threads.update_state(edited, {"category": "general", "feedback": None}, as_node="classify")
check(edit["checkpoint"]["checkpoint_id"], "update_state answers the edit's checkpoint")
state = client.threads.get_state(edited)
check(state["values"]["category"] == "general" and state["next"] == ["draft"]
      and state["checkpoint"]["checkpoint_id"] == edit["checkpoint"]["checkpoint_id"],
      f"get_state after update_state: the edit, and what it leads to ({state['next']})")
check(client.threads.get(edited)["status"] == "idle", "an edited thread is idle until a run takes the edit up")
taken = client.runs.wait(edited, "Support", input=None)
check("__interrupt__" in taken and taken["category"] == "general" and taken["drafts"] > first["drafts"],
      "a run with no input goes on from the edit (draft again, then the question)")
history = client.threads.get_history(edited, limit=100)
start = next(h for h in history if h["next"] == ["classify"])
forked = client.runs.wait(edited, "Support", input=None, checkpoint_id=start["checkpoint"]["checkpoint_id"])
check("__interrupt__" in forked and forked["category"] == "billing" and forked["invoice"],
      "a run from a checkpoint forks there: classified anew, the invoice looked up")
check(client.threads.get_state(edited)["values"]["category"] == "billing", "the thread follows the fork")
check(refused(lambda: client.threads.update_state(edited, {}, as_node="nowhere")) == 400,
      "update_state as a node the graph does not have is a 400")
edit = client.threads.update_state(edited, {"text": "edited at the start"}, as_node="classify",
                                   checkpoint_id=start["checkpoint"]["checkpoint_id"])
check(client.threads.get_state(edited)["values"]["text"] == "edited at the start",
      "update_state at an older checkpoint branches from it")

# Command(resume=..., update=...): the update folded in with the answer.
steered = client.threads.create()["thread_id"]
client.runs.wait(steered, "Support", input={"text": "a general question"})
done = client.runs.wait(steered, "Support", command=Command(resume="approve", update={"feedback": "be brief"}))
check(done["feedback"] == "be brief" and len(done["sent"]) == 1, "Command(resume=..., update=...) updates and answers")

# A copy goes on apart from its thread; a deleted thread is gone, its copy kept.
copied = client.threads.copy(edited)
check(copied["thread_id"] != edited
      and client.threads.get_state(copied["thread_id"])["values"] == client.threads.get_state(edited)["values"],
      "threads.copy: a new thread with the same state")
client.threads.delete(edited)
check(refused(lambda: client.threads.get(edited)) == 404, "threads.delete: the thread is gone")
check(client.threads.get(copied["thread_id"])["thread_id"] == copied["thread_id"], "the copy is kept")

# Threads can be searched and patched; a stateless run waits on a thread of its own.
client.threads.update(thread["thread_id"], metadata={"topic": "billing"})
found = client.threads.search(metadata={"user": "ada", "topic": "billing"})
check([t["thread_id"] for t in found] == [thread["thread_id"]], "threads.search by metadata after update")
alone = client.runs.wait(None, "Support", input={"text": "a general question"})
check("__interrupt__" in alone, "a stateless runs.wait")
started = client.runs.create(None, "Support", input={"text": "a stateless start"})
joined = client.runs.join(started["thread_id"], started["run_id"])
check(started["thread_id"] and "__interrupt__" in joined, "a stateless runs.create, joined on its own thread")

# Breakpoints at run creation: the run pauses before `draft`, and a run with no input goes on
# past it to the graph's own question.
stops = client.threads.create()
halted = client.runs.wait(stops["thread_id"], "Support", input={"text": "I was charged twice"},
                          interrupt_before=["draft"])
check(halted.get("drafts", 0) == 0 and "__interrupt__" in halted, "interrupt_before: the run pauses before draft")
check(client.threads.get_state(stops["thread_id"])["next"] == ["draft"], "get_state: next is the breakpoint's node")
went_on = client.runs.wait(stops["thread_id"], "Support", input=None, interrupt_before=["draft"])
check(went_on["drafts"] >= 1 and went_on["__interrupt__"][0]["id"] != halted["__interrupt__"][0]["id"],
      "a run with no input goes on past the breakpoint, to the graph's question")

# The support chat: a conversation on a thread, its reply streamed as it is written.
chat = client.threads.create()
said = {"messages": [{"type": "human", "content": "I was charged twice on my invoice"}]}
pieces = [part.data for part in client.runs.stream(chat["thread_id"], "Chat", input=said,
                                                   stream_mode="messages-tuple")
          if part.event == "messages"]
check(len(pieces) > 5 and all(p[0]["type"] == "AIMessageChunk" for p in pieces),
      "messages-tuple: the reply comes as AIMessageChunks, a word at a time")
check(all(p[1]["langgraph_node"] == "reply" and p[1]["thread_id"] == chat["thread_id"] for p in pieces),
      "messages-tuple: each piece's metadata names its node and thread")
messages = client.threads.get_state(chat["thread_id"])["values"]["messages"]
check("".join(p[0]["content"] for p in pieces) == messages[-1]["content"]
      and {p[0]["id"] for p in pieces} == {messages[-1]["id"]},
      "the pieces join to the reply kept in the thread, under its id")
second = client.runs.wait(chat["thread_id"], "Chat",
                          input={"messages": [{"role": "user", "content": "When will I see it?"}]})
check(len(second["messages"]) == 4 and second["messages"][0]["content"] == said["messages"][0]["content"]
      and "Message 2 of this conversation" in second["messages"][-1]["content"],
      "a second message on the thread continues the conversation")
whole = [part for part in client.runs.stream(chat["thread_id"], "Chat", stream_mode="messages",
                                             input={"messages": [{"type": "human", "content": "thanks"}]})
         if part.event.startswith("messages/")]
kinds = [part.event for part in whole]
# As LangGraph's: a streamed message is not sent whole again at its end (its last partial is it).
check(kinds[0] == "messages/metadata" and set(kinds[1:]) == {"messages/partial"},
      f"messages: the metadata, then the text so far each time ({sorted(set(kinds))})")
check(whole[-1].data[-1]["content"] == client.threads.get_state(chat["thread_id"])["values"]["messages"][-1]["content"],
      "the last messages/partial is the reply kept in the thread")
nested = [part.event for part in client.runs.stream(None, "Chat", input=said, stream_mode="updates",
                                                    stream_subgraphs=True)]
check("updates|lookup@2" in nested and "updates" in nested,
      "stream_subgraphs: the lookup subgraph's updates, namespaced, beside the chat's")

# What Trellis does not do is refused, as LangGraph refuses an invalid option.
try:
    client.runs.wait(thread["thread_id"], "Support", input={}, webhook="http://127.0.0.1:9/done")
    status = 200
except httpx.HTTPStatusError as error:
    status = error.response.status_code
check(status == 422, "an unsupported option is a 422")
try:
    client.threads.get(str(uuid.uuid4()))
    status = 200
except httpx.HTTPStatusError as error:
    status = error.response.status_code
check(status == 404, "an unknown thread is a 404")
print("all LangGraph SDK checks passed")
