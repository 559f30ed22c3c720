//! The live turn: the model, the tools, the history and the usage of one run, owned by the run
//! (one async mutex per run id), not by the graph state. Written through to the transcript store
//! after every change, so another process picks the turn up where this one left it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex as SyncMutex, PoisonError};

use tokio::sync::Mutex;
use trellis::RunId;

use crate::message::{Body, Message, ToolCall, Usage};
use crate::model::Model;
use crate::tool::ToolSet;
use crate::transcript::{Entry, TranscriptError, TranscriptStore};

/// One run's live turn.
pub(crate) struct LiveTurn {
    pub(crate) run_id: RunId,
    /// The agent's prompt, the turn's first message.
    pub(crate) prompt: Arc<str>,
    pub(crate) model: Arc<dyn Model>,
    pub(crate) tools: ToolSet,
    pub(crate) entries: Vec<Entry>,
    /// Tokens used by the model calls of this process (the state has the turn's totals).
    pub(crate) usage: Usage,
    loaded: bool,
    store: Arc<dyn TranscriptStore>,
}

impl LiveTurn {
    /// Drops what an earlier attempt of this activation wrote, and anything written by a step
    /// after it (never committed), so that a node run again does not write twice.
    pub(crate) fn rewind(&mut self, step: u64, node: &str) {
        self.entries.retain(|e| keeps(e, step, node));
    }

    /// Adds `message`, written by `node` in `step`.
    pub(crate) fn push(
        &mut self,
        step: u64,
        node: &str,
        message: Message,
        advertised: Vec<String>,
    ) {
        self.entries.push(Entry {
            step,
            node: node.to_owned(),
            message,
            advertised,
        });
    }

    /// Whether this run's turn has written its input: at step 0, by no node (what an earlier
    /// turn of a thread wrote is marked as such, [`EARLIER_TURN`]).
    pub(crate) fn said_input(&self) -> bool {
        self.entries
            .iter()
            .any(|e| e.step == 0 && e.node.is_empty())
    }

    /// Writes the history through to the store.
    pub(crate) async fn save(&self) -> Result<(), TranscriptError> {
        self.store.save(&self.run_id, &self.entries).await
    }

    /// The latest model answer: its entry's index.
    pub(crate) fn last_answer(&self) -> Option<usize> {
        self.entries
            .iter()
            .rposition(|e| matches!(e.message.body, Body::Assistant { .. }))
    }

    /// The latest model answer that called tools, with the tools advertised to it.
    pub(crate) fn last_calls(&self) -> Option<(&[ToolCall], &[String])> {
        self.entries
            .iter()
            .rev()
            .find(|e| !e.message.tool_calls().is_empty())
            .map(|e| (e.message.tool_calls(), e.advertised.as_slice()))
    }

    /// Whether the call `id` has a result.
    pub(crate) fn answered(&self, id: &str) -> bool {
        self.entries
            .iter()
            .any(|e| matches!(&e.message.body, Body::Tool { call_id, .. } if call_id == id))
    }

    /// Every call without a result, with its tool's name.
    pub(crate) fn open_calls(&self) -> Vec<(String, String)> {
        self.entries
            .iter()
            .flat_map(|e| e.message.tool_calls())
            .filter(|call| !self.answered(&call.id))
            .map(|call| (call.id.clone(), call.name.clone()))
            .collect()
    }

    /// The history as a model reads it: each answer's tool results right after it, in the
    /// order of its calls, wherever they were written (side-by-side nodes finish in any order).
    pub(crate) fn messages(&self) -> Vec<Message> {
        assemble(&self.entries)
    }
}

/// The node an entry written by an earlier turn of a thread is marked with, in a later turn's
/// history (where it is at step 0, before anything the turn writes).
pub(crate) const EARLIER_TURN: &str = "(earlier turn)";

/// Whether `entry` stays when `node` runs `step` (again).
fn keeps(entry: &Entry, step: u64, node: &str) -> bool {
    entry.step < step || (entry.step == step && entry.node != node)
}

/// The history in model order (see [`LiveTurn::messages`]).
pub(crate) fn assemble(entries: &[Entry]) -> Vec<Message> {
    // Which answer each result belongs to: the latest earlier answer with that call id.
    let mut results: HashMap<usize, Vec<(usize, &Message)>> = HashMap::new();
    for (at, entry) in entries.iter().enumerate() {
        if let Body::Tool { call_id, .. } = &entry.message.body {
            let owner = entries[..at].iter().enumerate().rev().find_map(|(i, e)| {
                let position = e
                    .message
                    .tool_calls()
                    .iter()
                    .position(|c| &c.id == call_id)?;
                Some((i, position))
            });
            match owner {
                Some((answer, position)) => results
                    .entry(answer)
                    .or_default()
                    .push((position, &entry.message)),
                // A result for no call: kept where it is (it cannot come from this crate).
                None => results.entry(at).or_default().push((0, &entry.message)),
            }
        }
    }
    let mut out = Vec::with_capacity(entries.len());
    for (at, entry) in entries.iter().enumerate() {
        if !matches!(entry.message.body, Body::Tool { .. }) {
            out.push(entry.message.clone());
        }
        if let Some(mut answered) = results.remove(&at) {
            answered.sort_by_key(|(position, _)| *position);
            out.extend(answered.into_iter().map(|(_, m)| m.clone()));
        }
    }
    out
}

/// The live turns of one agent graph, by run id.
pub(crate) struct Bridge {
    pub(crate) prompt: Arc<str>,
    pub(crate) model: Arc<dyn Model>,
    pub(crate) tools: ToolSet,
    pub(crate) store: Arc<dyn TranscriptStore>,
    turns: SyncMutex<HashMap<RunId, Arc<Mutex<LiveTurn>>>>,
}

impl Bridge {
    pub(crate) fn new(
        prompt: Arc<str>,
        model: Arc<dyn Model>,
        tools: ToolSet,
        store: Arc<dyn TranscriptStore>,
    ) -> Self {
        Bridge {
            prompt,
            model,
            tools,
            store,
            turns: SyncMutex::new(HashMap::new()),
        }
    }

    /// The run's live turn, its history loaded from the store on first use in this process.
    pub(crate) async fn turn(
        &self,
        run_id: &RunId,
    ) -> Result<Arc<Mutex<LiveTurn>>, TranscriptError> {
        let turn = {
            let mut turns = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(turns.entry(run_id.clone()).or_insert_with(|| {
                Arc::new(Mutex::new(LiveTurn {
                    run_id: run_id.clone(),
                    prompt: Arc::clone(&self.prompt),
                    model: Arc::clone(&self.model),
                    tools: self.tools.clone(),
                    entries: Vec::new(),
                    usage: Usage::default(),
                    loaded: false,
                    store: Arc::clone(&self.store),
                }))
            }))
        };
        {
            let mut live = turn.lock().await;
            if !live.loaded {
                live.entries = self.store.load(run_id).await?;
                live.loaded = true;
            }
        }
        Ok(turn)
    }

    /// Forgets the run's live turn (its history stays in the store).
    pub(crate) fn release(&self, run_id: &RunId) {
        self.turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(run_id);
    }
}

#[cfg(test)]
mod tests {
    use super::assemble;
    use crate::message::{Message, ToolCall};
    use crate::transcript::Entry;

    fn entry(step: u64, node: &str, message: Message) -> Entry {
        Entry {
            step,
            node: node.into(),
            message,
            advertised: Vec::new(),
        }
    }

    fn result(id: &str) -> Message {
        Message::tool(&ToolCall::new(id, "t", "{}"), id, false)
    }

    #[test]
    fn a_node_run_again_replaces_what_it_wrote_and_keeps_its_siblings() {
        let mut entries = vec![
            entry(0, "", Message::user("go")),
            entry(3, "research", result("a")),
            entry(3, "critique", result("b")),
            entry(4, "synthesize", Message::assistant("never committed")),
        ];
        // `research` runs step 3 again (a retry, or the step re-run after a crash).
        entries.retain(|e| super::keeps(e, 3, "research"));
        let kept: Vec<(u64, &str)> = entries.iter().map(|e| (e.step, e.node.as_str())).collect();
        assert_eq!(kept, [(0, ""), (3, "critique")]);
    }

    #[test]
    fn results_follow_their_calls_in_call_order_whatever_order_they_were_written_in() {
        let calls = Message::calls(
            None,
            vec![ToolCall::new("a", "t", "{}"), ToolCall::new("b", "t", "{}")],
        );
        let (go, a, b) = (Message::user("go"), result("a"), result("b"));
        let done = Message::assistant("done");
        let entries = [
            entry(0, "", go.clone()),
            entry(1, "dispatch", calls.clone()),
            entry(2, "second", b.clone()),
            entry(2, "first", a.clone()),
            entry(3, "dispatch", done.clone()),
        ];
        // The messages themselves, ids and all: only their order changes.
        assert_eq!(assemble(&entries), [go, calls, a, b, done]);
    }
}
