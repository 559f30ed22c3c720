//! States and helpers shared by the runtime's integration tests.
#![allow(dead_code, unreachable_pub)]

pub mod deltas;
pub mod joins;
pub mod retention;
pub mod sends;
pub mod subgraphs;
pub mod thread_edits;
pub mod threads;
pub mod travel;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use trellis::{
    GraphState,
    blueprint::InterruptPoint,
    event::Event,
    event::EventStream,
    interrupt::{ApplyResume, Interrupt},
};

/// The support flow's state: every reducer kind the derive offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, GraphState)]
pub struct Ticket {
    pub text: String,
    pub category: Option<String>,
    pub draft: Option<String>,
    #[reducer(append)]
    pub log: Vec<String>,
    #[reducer(sum)]
    pub reviews: u32,
    pub verdict: Option<String>,
    pub approved: Option<bool>,
}

/// A person's answer to an interrupt.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Approve,
    Reject(String),
    Note(String),
}

impl ApplyResume for Ticket {
    type Input = Answer;
    fn apply_resume(&self, interrupt: &Interrupt, input: Answer) -> TicketUpdate {
        let update = TicketUpdate::default().log(format!("answered {}", interrupt.id));
        match (input, interrupt.point) {
            (Answer::Approve, _) => update.approved(Some(true)),
            (Answer::Reject(why), _) => update.approved(Some(false)).verdict(Some(why)),
            (Answer::Note(note), _) => update.log(note),
        }
    }
}

/// A node result that appends `entry` to the log.
pub fn log(entry: &str) -> trellis::NodeResult<TicketUpdate> {
    trellis::NodeResult::Update(TicketUpdate::default().log(entry))
}

/// draft → send, pausing before `send` for an approval; `send` logs "sent" when approved and
/// "held" otherwise. Runs are recorded in `store`.
pub fn approval_graph<C>(store: Arc<C>) -> trellis::CompiledGraph<Ticket>
where
    C: trellis::checkpoint::SharedCheckpointer + ?Sized,
{
    use trellis::{END, GraphBuilder, NodeOptions, NodeResult, START};
    let mut builder = GraphBuilder::<Ticket>::new("Approval");
    builder
        .add_node_fn("draft", |_, _| async {
            Ok(NodeResult::Update(
                TicketUpdate::default()
                    .draft(Some("hello".to_owned()))
                    .log("draft"),
            ))
        })
        .add_node_fn_with(
            "send",
            |s, _| async move {
                let entry = if s.approved == Some(true) {
                    "sent"
                } else {
                    "held"
                };
                Ok(NodeResult::Update(TicketUpdate::default().log(entry)))
            },
            NodeOptions::new().interrupt_before(),
        )
        .add_edge(START, "draft")
        .add_edge("draft", "send")
        .add_edge("send", END)
        .set_checkpointer(store);
    builder.compile().expect("valid graph")
}

/// v1: draft → send (paused before send). Other versions change the shape.
pub fn versioned<C>(store: Arc<C>, last: &str, extra: bool) -> trellis::CompiledGraph<Ticket>
where
    C: trellis::checkpoint::SharedCheckpointer + ?Sized,
{
    use trellis::{END, GraphBuilder, NodeOptions, NodeResult, START};
    let mut builder = GraphBuilder::<Ticket>::new("Versioned");
    builder
        .add_node_fn("draft", |_, _| async { Ok(log("draft")) })
        .add_node_fn_with(
            last,
            |_, _| async { Ok(log("last")) },
            NodeOptions::new().interrupt_before(),
        )
        .add_edge(START, "draft")
        .add_edge("draft", last)
        .add_edge(last, END)
        .set_checkpointer(store);
    if extra {
        builder
            .add_node_fn("audit", |_, _| async { Ok(NodeResult::None) })
            .add_edge("audit", END);
    }
    builder.compile().expect("valid graph")
}

/// Every activation of `counted_graph`'s node, per run: the step numbers it ran, in order.
pub type Executed = Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<u32>>>>;

/// Counts to `steps` in `reviews`, logging `tick N`, each step taking `delay`; every activation
/// is recorded in `executed`, to prove that nothing runs twice.
pub fn counted_graph(
    steps: u32,
    executed: Executed,
    delay: std::time::Duration,
) -> trellis::CompiledGraph<Ticket> {
    use trellis::{END, GraphBuilder, NodeResult, START};
    let mut builder = GraphBuilder::<Ticket>::new("Counted");
    builder
        .add_node_fn("tick", move |state, ctx| {
            let executed = Arc::clone(&executed);
            async move {
                let n = state.reviews + 1;
                tokio::time::sleep(delay).await;
                executed
                    .lock()
                    .expect("not poisoned")
                    .entry(ctx.run_id().to_string())
                    .or_default()
                    .push(n);
                Ok(NodeResult::Update(
                    TicketUpdate::default().reviews(1).log(format!("tick {n}")),
                ))
            }
        })
        .add_edge(START, "tick")
        .add_conditional_edges(
            "tick",
            move |s: &Ticket| if s.reviews < steps { "tick" } else { END },
            ["tick", END],
        );
    builder.compile().expect("valid graph")
}

/// The labels of a stored run's checkpoints, in order.
pub async fn labels(
    store: &dyn trellis::checkpoint::Checkpointer,
    run_id: &trellis::RunId,
) -> Vec<String> {
    store
        .list_checkpoints(run_id)
        .await
        .expect("lists checkpoints")
        .iter()
        .map(|c| c.label.to_string())
        .collect()
}

/// A scratch folder for one test, named after it, removed with everything in it when dropped.
pub fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("trellis-{name}-"))
        .tempdir()
        .expect("a scratch folder")
}

/// Two stores on one fresh SQLite file in `dir`, as two processes would open it.
#[cfg(feature = "sqlite")]
pub fn sqlite_pair(
    dir: &tempfile::TempDir,
) -> (
    Arc<dyn trellis::checkpoint::Checkpointer>,
    Arc<dyn trellis::checkpoint::Checkpointer>,
) {
    use trellis::checkpoint::SqliteCheckpointer;
    let path = dir.path().join("runs.db");
    let open = || SqliteCheckpointer::open(&path).expect("opens");
    (Arc::new(open()), Arc::new(open()))
}

/// The codes a build fails with (none when it compiles).
pub fn codes(builder: trellis::GraphBuilder<Ticket>) -> Vec<String> {
    builder
        .compile()
        .map(|_| Vec::new())
        .unwrap_or_else(|e| e.diagnostics.iter().map(|d| d.code.to_string()).collect())
}

pub fn ticket(text: &str) -> Ticket {
    Ticket {
        text: text.to_owned(),
        ..Ticket::default()
    }
}

/// Counts how often it is cloned, to prove a super-step copies the state at most once.
#[derive(Debug, Default, Serialize, Deserialize, GraphState)]
pub struct Counted {
    #[reducer(append)]
    pub log: Vec<String>,
    #[serde(skip)]
    #[reducer(with = adopt)]
    pub clones: CloneCounter,
}

/// The counter given (a run's input, folded into the default) is the one counted with.
fn adopt(counter: &mut CloneCounter, given: CloneCounter) {
    *counter = given;
}

#[derive(Debug, Default)]
pub struct CloneCounter(pub Arc<AtomicUsize>);

impl Clone for CloneCounter {
    fn clone(&self) -> Self {
        self.0.fetch_add(1, Ordering::SeqCst);
        CloneCounter(Arc::clone(&self.0))
    }
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        Counted {
            log: self.log.clone(),
            clones: self.clones.clone(),
        }
    }
}

/// Every event waiting in `stream`, by name.
pub fn drain(stream: &mut EventStream) -> Vec<Event> {
    std::iter::from_fn(|| stream.try_next()).collect()
}

pub fn names(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(Event::name).collect()
}

/// `name node` for node events, `name` for the others: a run's shape without times and ids.
pub fn shape(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            Event::NodeEntered { node, step, .. } => format!("{step} entered {node}"),
            Event::NodeCompleted {
                node,
                step,
                command,
                ..
            } => format!("{step} completed {node} {command}"),
            Event::NodeFailed { node, attempt, .. } => format!("failed {node} #{attempt}"),
            Event::CheckpointSaved { label, step, .. } => format!("{step} checkpoint {label}"),
            Event::RunPaused { interrupts, .. } => format!(
                "paused {}",
                interrupts
                    .iter()
                    .map(|i| i.id.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            other => other.name().to_owned(),
        })
        .collect()
}

pub fn point_of(interrupt: &Interrupt) -> InterruptPoint {
    interrupt.point
}

/// Makes run `run_id` look as if a process of another machine held it and died: its owner
/// `another-machine:1:1`, its lease run out long ago. (Through `take_over`, as a real one.)
pub async fn hand_to_a_gone_owner(
    store: &dyn trellis::checkpoint::Checkpointer,
    run_id: &trellis::RunId,
) {
    let record = store
        .load_run(run_id)
        .await
        .expect("loads")
        .expect("stored");
    let mut gone = record.clone();
    gone.owner = Some("another-machine:1:1".into());
    gone.lease_until =
        Some(trellis::run::Timestamp::parse("2000-01-01T00:00:00Z").expect("a time"));
    assert!(
        store
            .take_over(&gone, record.owner.as_deref())
            .await
            .expect("takes over"),
        "the owner changed meanwhile"
    );
}
